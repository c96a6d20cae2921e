"""The ``README.md`` that makes a folder of tables load with Hugging Face ``datasets``.

Its YAML header declares one configuration per table (``load_dataset(folder, "turns")``).
Parquet tables carry their own types (numbers, booleans, UTC timestamps, nulls), so the
header only names the files. CSV tables are declared with every column typed as text, so
nothing is guessed: a reply reading ``NA`` or ``None`` stays that text, and a column never
changes type between chunks of a large file; only empty cells read as missing. An empty
table is left out (``datasets`` refuses a configuration without rows). The body is free
Markdown (a datasheet, for a release).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import yaml

from corix.config import write_atomically

__all__ = ["write_dataset_card"]


def write_dataset_card(
    out_dir: Path,
    tables: Mapping[str, Sequence[str]],
    counts: Mapping[str, int],
    body: str,
    *,
    default: str,
    license_id: str | None = None,
    file_format: Literal["csv", "parquet"] = "csv",
) -> Path:
    """Write ``out_dir/README.md`` declaring ``<table>.<file_format>`` for every table with
    rows."""
    filled = {name: columns for name, columns in tables.items() if counts.get(name)}
    header: dict[str, object] = {}
    if license_id:
        header["license"] = license_id.lower()
    text_only = {"keep_default_na": False, "na_values": [""]} if file_format == "csv" else {}
    header["configs"] = [
        {
            "config_name": name,
            "data_files": [{"split": "train", "path": f"{name}.{file_format}"}],
            **text_only,
            **({"default": True} if name == default else {}),
        }
        for name in filled
    ]
    if file_format == "csv":
        header["dataset_info"] = [
            {
                "config_name": name,
                "features": [{"name": column, "dtype": "string"} for column in columns],
            }
            for name, columns in filled.items()
        ]
    front = yaml.safe_dump(header, sort_keys=False, allow_unicode=True)
    path = out_dir / "README.md"
    write_atomically(path, f"---\n{front}---\n\n{body.rstrip()}\n")
    return path
