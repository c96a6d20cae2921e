"""Parquet copies of the exported tables (the ``parquet`` extra: pyarrow).

Rows go into each table's Parquet file as they stream, one row group per
``rows_per_group`` rows, so memory stays flat however large the run. Columns are typed as
the table declares them — integers, floats, booleans, timestamps in UTC (``timestamp[us,
tz=UTC]``) — and text otherwise; a missing value is null, never an empty string, and no
cell is formula-escaped (that is for spreadsheets, which do not open Parquet).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from corix.config import atomic_path
from corix.errors import CorixError

__all__ = ["ColumnType", "ParquetTables"]

ColumnType = Literal["int", "float", "bool", "timestamp"]
"""A column that is not text."""


class ParquetTables:
    """One Parquet file per table in a folder, written a row group at a time."""

    def __init__(
        self,
        out_dir: Path,
        tables: Mapping[str, Sequence[str]],
        types: Mapping[str, Mapping[str, ColumnType]] | None = None,
        *,
        rows_per_group: int = 10_000,
    ) -> None:
        try:
            import pyarrow as pa
            from pyarrow import parquet as pq
        except ImportError:
            raise CorixError("Parquet export needs pyarrow: pip install 'corix[parquet]'") from None
        out_dir.mkdir(parents=True, exist_ok=True)
        self._pa = pa
        self._columns = {name: tuple(columns) for name, columns in tables.items()}
        self._types = {name: dict((types or {}).get(name, {})) for name in tables}
        arrow_types = {
            "int": pa.int64(),
            "float": pa.float64(),
            "bool": pa.bool_(),
            "timestamp": pa.timestamp("us", tz="UTC"),
        }
        self._schemas = {
            name: pa.schema(
                [
                    (column, arrow_types.get(self._types[name].get(column, ""), pa.string()))
                    for column in columns
                ]
            )
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
        self.counts = dict.fromkeys(tables, 0)

    def write(self, table: str, row: Mapping[str, Any]) -> None:
        pending = self._pending[table]
        pending.append(row)
        self.counts[table] += 1
        if len(pending) >= self._rows_per_group:
            self._flush(table)

    def _flush(self, table: str) -> None:
        rows = self._pending[table]
        if not rows:
            return
        types = self._types[table]
        columns = {
            column: [_cell(row.get(column), types.get(column)) for row in rows]
            for column in self._columns[table]
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


def _cell(value: object, kind: ColumnType | None) -> object:
    """``value`` as its column holds it: null stays null, a typed column gets its type
    (a naive moment is UTC, as corix stores every moment), anything else its text."""
    if value is None or kind is not None:
        if isinstance(value, datetime) and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value
    return str(value)
