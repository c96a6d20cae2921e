"""The shared CSV and JSON Lines readers: files parsed as their formats say, errors located."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from corix.config import jsonl_records, read_config_text, read_csv_rows
from corix.config.csv_inputs import CSV_CELL_LIMIT
from corix.errors import ConfigError


def _write_csv(path: Path, rows: list[list[str]], *, lineterminator: str = "\r\n") -> Path:
    # Written by the csv module, as a spreadsheet or pandas would quote it.
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator=lineterminator).writerows(rows)
    return path


def test_a_quoted_cell_keeps_its_line_breaks_and_rows_keep_their_first_line(
    tmp_path: Path,
) -> None:
    path = _write_csv(
        tmp_path / "t.csv",
        [
            ["id", "text"],
            ["a", "line1\nline2"],
            ["b", "crlf\r\ninside"],
            ["c", "sep\u2028and\x85next"],
        ],
    )
    table = read_csv_rows(path)
    assert table.header == ("id", "text")
    assert table.rows == [
        (2, {"id": "a", "text": "line1\nline2"}),
        (4, {"id": "b", "text": "crlf\r\ninside"}),
        (6, {"id": "c", "text": "sep\u2028and\x85next"}),
    ]


def test_a_byte_order_mark_and_lf_endings_read_like_any_csv(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufeffid,text\na,hello\n\nb,bye\n".encode())
    table = read_csv_rows(path)
    assert table.header == ("id", "text")  # not "\ufeffid"
    assert [(line, row["id"]) for line, row in table.rows] == [(2, "a"), (4, "b")]


def test_cells_up_to_the_limit_are_read_and_a_larger_one_is_named(tmp_path: Path) -> None:
    big = "x" * 200_000  # over the csv module's default limit of 131,072
    path = _write_csv(tmp_path / "big.csv", [["id", "text"], ["a", "short"], ["b", big]])
    assert read_csv_rows(path).rows[1][1]["text"] == big
    with pytest.raises(ConfigError) as caught:
        read_csv_rows(path, cell_limit=100_000)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 3, "text")
    assert "200,000 characters; at most 100,000" in str(caught.value)
    assert CSV_CELL_LIMIT == 16 * 1024 * 1024


def test_a_row_with_a_cell_too_many_or_few_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    path.write_text("id,text\na,ok\nb,one,two\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_csv_rows(path)
    assert caught.value.line == 3 and "3 cells where the header has 2" in str(caught.value)


def test_an_unterminated_quote_is_malformed_csv(tmp_path: Path) -> None:
    path = tmp_path / "open.csv"
    path.write_text('id,text\na,"never closed\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="malformed CSV"):
        read_csv_rows(path)


def test_json_lines_split_on_newlines_only(tmp_path: Path) -> None:
    texts = ["a\u2028b", "c\u2029d", "e\x85f", "g\x0ch", "i\x1cj"]
    # ensure_ascii=False writes the separators raw, as many JSON writers do.
    body = "\r\n".join(json.dumps({"text": text}, ensure_ascii=False) for text in texts)
    path = tmp_path / "seps.jsonl"
    path.write_text(body, encoding="utf-8", newline="")
    records = jsonl_records(read_config_text(path), path)
    assert [(line, record["text"]) for line, record in records] == list(enumerate(texts, start=1))
