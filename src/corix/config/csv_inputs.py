"""CSV read from files a user controls, parsed as CSV: the one reader corix's inputs share.

The file's text is read whole (``read_config_text``: UTF-8, a byte-order mark dropped) and
handed to :mod:`csv` as the module wants it (``newline=''``), so a quoted cell keeps its
line breaks and CRLF files read like LF ones. ``str.splitlines`` would have joined the
lines of a quoted cell and split on Unicode line separators inside it.

A cell may hold up to :data:`CSV_CELL_LIMIT` characters; a longer one is refused with the
file, the line and the column. Every row must have as many cells as the header, and a
quote left open is an error (strict parsing), never the rest of the file read as one cell.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from corix.config.yaml_loader import read_config_text
from corix.errors import ConfigError

CSV_CELL_LIMIT = 16 * 1024 * 1024
"""Characters one CSV cell may hold (16 MiB): far beyond any dialogue turn or label, and
a bound on what one malformed quote can swallow."""

_MODULE_LIMIT = 2**31 - 1
"""The csv module's own limit, raised so that corix's check, which can name the column,
is the one that refuses (the module's default is 131,072 characters and its error names
neither line nor column). The text is in memory already, so no cell can exceed it."""


@dataclass(frozen=True, slots=True)
class CsvRows:
    """A CSV file's header and its rows, each with the line its record starts on."""

    header: tuple[str, ...]
    rows: list[tuple[int, dict[str, str]]]

    def missing(self, columns: tuple[str, ...]) -> list[str]:
        """The ``columns`` the header lacks, in order."""
        return [column for column in columns if column not in self.header]


def read_csv_rows(path: Path, *, cell_limit: int = CSV_CELL_LIMIT) -> CsvRows:
    """Every row of the CSV file ``path`` as ``(first line, {column: cell})``; blank lines
    are skipped. Malformed CSV, a row whose cell count differs from the header's and a
    cell over ``cell_limit`` characters raise :class:`ConfigError` naming file and line."""
    text = read_config_text(path)
    if csv.field_size_limit() < _MODULE_LIMIT:
        csv.field_size_limit(_MODULE_LIMIT)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    ended = 0  # the line the previous record ended on
    header: tuple[str, ...] | None = None
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        for cells in reader:
            first_line, ended = ended + 1, reader.line_num
            if not cells:
                continue
            if header is None:
                header = tuple(cell.strip() for cell in cells)
                _check_cells(header, cells, path, first_line, cell_limit)
                continue
            _check_cells(header, cells, path, first_line, cell_limit)
            if len(cells) != len(header):
                raise ConfigError(
                    f"{len(cells)} cells where the header has {len(header)}",
                    path=path,
                    line=first_line,
                )
            rows.append((first_line, dict(zip(header, cells, strict=True))))
    except csv.Error as exc:  # a quote left open or followed by text, a NUL byte
        raise ConfigError(f"malformed CSV: {exc}", path=path, line=ended + 1) from None
    if header is None:
        raise ConfigError("the file is empty: expected a header row", path=path, line=1)
    return CsvRows(header, rows)


def _check_cells(
    header: tuple[str, ...], cells: list[str], path: Path, line: int, limit: int
) -> None:
    for index, cell in enumerate(cells):
        if len(cell) > limit:
            column = header[index] if index < len(header) else f"column {index + 1}"
            raise ConfigError(
                f"a cell of {len(cell):,} characters; at most {limit:,} are read",
                path=path,
                field=column,
                line=line,
            )
