"""Parquet copies of the exported tables (the ``parquet`` extra: pyarrow).

Each CSV table is streamed into a Parquet file of the same name, batch by batch, so
memory stays flat however large the run. Every column is read as text: a table of
replies and labels has no types to guess, and a consumer casts what it needs.
"""

from __future__ import annotations

import csv
from pathlib import Path

from corix.errors import CorixError

__all__ = ["csv_tables_to_parquet"]


def csv_tables_to_parquet(out_dir: Path) -> list[Path]:
    """Write ``<table>.parquet`` beside every ``<table>.csv`` in ``out_dir``."""
    try:
        import pyarrow as pa
        from pyarrow import csv as pa_csv
        from pyarrow import parquet as pq
    except ImportError:
        raise CorixError("Parquet export needs pyarrow: pip install 'corix[parquet]'") from None
    written = []
    for table in sorted(out_dir.glob("*.csv")):
        with table.open(newline="", encoding="utf-8") as handle:
            header = next(csv.reader(handle))
        convert = pa_csv.ConvertOptions(column_types=dict.fromkeys(header, pa.string()))
        # Replies span lines: quoted values may hold newlines.
        parse = pa_csv.ParseOptions(newlines_in_values=True)
        reader = pa_csv.open_csv(table, convert_options=convert, parse_options=parse)
        target = table.with_suffix(".parquet")
        with pq.ParquetWriter(target, reader.schema) as writer:
            for batch in reader:
                writer.write_batch(batch)
        written.append(target)
    return written
