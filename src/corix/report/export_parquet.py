"""Parquet copies of the exported tables (the ``parquet`` extra: pyarrow).

Rows go into each table's Parquet file as they stream, one row group per
``rows_per_group`` rows, so memory stays flat however large the run. Every column is
text, written as the CSV table writes it (empty for a missing value): a table of replies
and labels has no types to guess, and a consumer casts what it needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

from corix.config import atomic_path
from corix.errors import CorixError

__all__ = ["ParquetTables"]


class ParquetTables:
    """One Parquet file per table in a folder, written a row group at a time."""

    def __init__(
        self, out_dir: Path, tables: Mapping[str, Sequence[str]], *, rows_per_group: int = 10_000
    ) -> None:
        try:
            import pyarrow as pa
            from pyarrow import parquet as pq
        except ImportError:
            raise CorixError("Parquet export needs pyarrow: pip install 'corix[parquet]'") from None
        out_dir.mkdir(parents=True, exist_ok=True)
        self._pa = pa
        self._columns = {name: tuple(columns) for name, columns in tables.items()}
        self._schemas = {
            name: pa.schema([(column, pa.string()) for column in columns])
            for name, columns in self._columns.items()
        }
        # Each file appears under its name only when the whole export has ended well.
        self._files = ExitStack()
        self._writers = {
            name: pq.ParquetWriter(
                self._files.enter_context(atomic_path(out_dir / f"{name}.parquet")), schema
            )
            for name, schema in self._schemas.items()
        }
        self._pending: dict[str, list[Mapping[str, Any]]] = {name: [] for name in tables}
        self._rows_per_group = rows_per_group

    def write(self, table: str, row: Mapping[str, Any]) -> None:
        pending = self._pending[table]
        pending.append(row)
        if len(pending) >= self._rows_per_group:
            self._flush(table)

    def _flush(self, table: str) -> None:
        rows = self._pending[table]
        if not rows:
            return
        columns = {
            column: [_text(row.get(column)) for row in rows] for column in self._columns[table]
        }
        self._writers[table].write_table(
            self._pa.Table.from_pydict(columns, schema=self._schemas[table])
        )
        rows.clear()

    def __enter__(self) -> ParquetTables:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for table, writer in self._writers.items():
            if exc is None:
                self._flush(table)
            writer.close()
        self._files.__exit__(exc_type, exc, traceback)


def _text(value: object) -> str:
    """The cell as the CSV table holds it: ``csv`` writes ``str(value)``, nothing for
    ``None``."""
    return "" if value is None else str(value)
