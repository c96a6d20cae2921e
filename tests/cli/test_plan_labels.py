"""`corix plan labels`: the core's plan as a table, as JSON, and as the web series' queue."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from typer.testing import CliRunner

from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.measurement import measure
from corix.measurement.sizing.label_plan import plan_labels
from corix.storage import Database
from corix.storage.web import queues, transaction
from corix.storage.web import series as series_store
from corix.storage.web.selection import label_plan
from support.testers_run import write_partly_labelled_run
from support.web_records import add_user, new_series

runner = CliRunner()


async def test_json_holds_the_cores_plan(sqlite_db: Database) -> None:
    run_id = await write_partly_labelled_run(sqlite_db)
    args = ["plan", "labels", run_id, "--annotator", "llm", "--budget", "4"]
    result = runner.invoke(app, [*args, "--db", sqlite_db.url, "--json"])
    assert result.exit_code == ExitCode.OK, result.output
    shown = json.loads(result.output)["label_plan"]
    expected = plan_labels(measure(sqlite_db, [run_id]), judge="llm", reference="human", budget=4)
    assert shown["dialogues"] == expected.model_dump(mode="json")["dialogues"]
    assert shown["cells"][0]["shrink"] == expected.cells[0].shrink


async def test_the_table_and_the_web_series_queue_take_the_plan(sqlite_db: Database) -> None:
    run_id = await write_partly_labelled_run(sqlite_db)
    evaluation_id = new_series(sqlite_db, "spring")
    series_store.link_run(sqlite_db, f"test {run_id}", evaluation_id)
    args = ["plan", "labels", "--series", "spring", "--budget", "3", "--assign"]
    result = runner.invoke(app, [*args, "--db", sqlite_db.url])
    assert result.exit_code == ExitCode.OK, result.output
    words = " ".join(result.output.split())
    assert "3 dialogues for 'human' to label" in words and "shrink" in words
    assert "'spring' now offers these dialogues" in words
    plan = plan_labels(measure(sqlite_db, [run_id]), judge="llm", reference="human", budget=3)
    chosen = sorted(d.session_id for d in plan.dialogues)
    annotator = add_user(sqlite_db, "ann", "annotator")
    with transaction(sqlite_db) as tx:
        stored = series_store.settings(tx, evaluation_id)
        offered = queues.candidates(
            tx,
            evaluation_id,
            "risk_assessment",
            annotator,
            passes=1,
            counted=("submitted",),
            claims=("open", datetime.now(UTC)),
            selection=stored.human_annotation if stored else "",
            sample_size=0,
            violation=None,
        )
        assert label_plan(tx, evaluation_id) == chosen
    assert sorted(session_id for session_id, _ in offered) == chosen


async def test_assign_needs_a_web_series(sqlite_db: Database) -> None:
    run_id = await write_partly_labelled_run(sqlite_db)
    result = runner.invoke(
        app, ["plan", "labels", run_id, "--budget", "2", "--assign", "--db", sqlite_db.url]
    )
    assert result.exit_code == ExitCode.USAGE and "needs a web series" in result.output


async def test_a_gate_inside_a_cells_interval_is_shown_undecided(sqlite_db: Database) -> None:
    run_id = await write_partly_labelled_run(sqlite_db)
    args = ["plan", "labels", run_id, "--budget", "2", "--db", sqlite_db.url]
    shown = json.loads(runner.invoke(app, [*args, "--json"]).output)["label_plan"]
    rate = shown["cells"][0]["corrected_rate"]
    result = runner.invoke(app, [*args, "--gate", f"{rate:.4f}"])
    assert result.exit_code == ExitCode.OK, result.output
    words = " ".join(result.output.split())
    assert "counts twice" in words
    inside = json.loads(runner.invoke(app, [*args, "--gate", f"{rate:.4f}", "--json"]).output)
    assert inside["label_plan"]["cells"][0]["undecided_gate"]
    outside = json.loads(runner.invoke(app, [*args, "--gate", "1", "--json"]).output)
    assert (
        outside["label_plan"]["gate"] == 1
        and not outside["label_plan"]["cells"][0]["undecided_gate"]
    )


async def test_without_gate_the_runs_plan_gate_is_the_one(sqlite_db: Database) -> None:
    run_id = await write_partly_labelled_run(sqlite_db, gates={"guardrail_violation": 0.2})
    args = ["plan", "labels", run_id, "--budget", "2", "--db", sqlite_db.url, "--json"]
    planned = json.loads(runner.invoke(app, args).output)["label_plan"]
    assert planned["gate"] == 0.2
    given = json.loads(runner.invoke(app, [*args, "--gate", "0.5"]).output)["label_plan"]
    assert given["gate"] == 0.5
    other = await write_partly_labelled_run(sqlite_db, run_id="run-ungated")
    args[2] = other
    assert json.loads(runner.invoke(app, args).output)["label_plan"]["gate"] is None
