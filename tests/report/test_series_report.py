"""`corix report --series NAME`: one measurement over every run of an evaluation series."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from corix.assessment.annotation_run import annotate_run_async
from corix.cli.report_cmds import report_command
from corix.demo import demo_plan
from corix.domain import Level
from corix.errors import CorixError
from corix.execution import execute_plan
from corix.measurement.core import measure
from corix.measurement.spec import MeasurementSpec
from corix.report import write_report
from corix.storage import Database
from support.web_records import series_of

runner = CliRunner()
SERIES = "pilot"


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("report")(report_command)
    app.command("unused")(lambda: None)  # keeps "report" a subcommand
    return app


async def _series_of_two_runs(db: Database) -> list[str]:
    """A model-testing run, then a red-teaming run, of the demo's applications."""
    plan = demo_plan()
    run_ids = []
    for level in (Level.MODEL_TESTING, Level.RED_TEAMING):
        one_level = plan.model_copy(update={"levels": {level: plan.levels[level]}})
        run_id = (await execute_plan(one_level, db)).run_id
        await annotate_run_async(db, run_id)
        run_ids.append(run_id)
    series_of(db, SERIES, [plan.name])  # both runs bear the plan's name
    return run_ids


async def test_a_series_report_counts_the_dialogues_of_all_its_runs(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_ids = await _series_of_two_runs(sqlite_db)
    out = tmp_path / "series"
    result = runner.invoke(
        _app(),
        [
            "report",
            "--series",
            SERIES,
            "--out",
            str(out),
            "--bootstrap",
            "20",
            "--db",
            sqlite_db.url,
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads((out / "report.json").read_text(encoding="utf-8"))

    by_run = [
        {
            json.dumps(rate.group, sort_keys=True): rate
            for rate in measure(sqlite_db, [run_id], MeasurementSpec()).rates(
                by=("harm", "application")
            )
        }
        for run_id in run_ids
    ]
    totals = document["violation_totals"] + document["defect_totals"]
    assert totals
    for total in totals:
        parts = [rates[json.dumps(total["group"], sort_keys=True)] for rates in by_run]
        # Each run's dialogues count once in the series: n and defects add up.
        assert total["n"] == sum(part.n for part in parts)
        assert total["defects"] == sum(part.defects for part in parts)
        assert sorted(total["dialogues"]) == sorted(d for part in parts for d in part.dialogues)


async def test_a_run_and_a_series_together_or_an_unknown_series_are_refused(
    sqlite_db: Database, tmp_path: Path
) -> None:
    both = runner.invoke(_app(), ["report", "run-x", "--series", SERIES, "--db", sqlite_db.url])
    assert both.exit_code != 0
    assert "one of them" in both.output
    unknown = runner.invoke(
        _app(),
        ["report", "--series", "nope", "--out", str(tmp_path / "r"), "--db", sqlite_db.url],
    )
    # A CorixError: the CLI's entry point prints its message without a traceback.
    assert isinstance(unknown.exception, CorixError)
    assert "no evaluation series named 'nope'" in str(unknown.exception)
    assert not (tmp_path / "r").exists()


async def test_a_rerun_series_gives_identical_intervals(tmp_path: Path) -> None:
    trees = []
    for attempt in ("first", "second"):
        db = Database(f"sqlite:///{tmp_path / attempt}.db")
        try:
            await _series_of_two_runs(db)
            paths = write_report(db, "", tmp_path / attempt, bootstrap=30, series=SERIES)
        finally:
            db.dispose()
        document = json.loads(paths.json.read_text(encoding="utf-8"))
        trees.append(_without_dialogue_ids(document["trees"]))
    # Dialogues are resampled by their position in the series, not by random run ids.
    assert trees[0] == trees[1]


def _without_dialogue_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_dialogue_ids(v) for k, v in value.items() if k != "dialogues"}
    if isinstance(value, list):
        return [_without_dialogue_ids(item) for item in value]
    return value
