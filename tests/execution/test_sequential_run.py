"""`corix run --until`: waves, cells that stop, the report of the rule, and resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.cli.main import app
from corix.domain import RunSummary, SequentialSummary, load_plan_file
from corix.execution import WaveDecision, WaveOrder, execute_in_waves
from corix.measurement.stopping.record import sequential_record
from corix.measurement.stopping.rules import StoppingRule
from corix.measurement.waves import SequentialDecider
from corix.report import write_report
from corix.storage import Database, get_run, list_runs

runner = CliRunner()
CELL = ("harm", "application", "scenario", "level")

PLAN = """\
name: sequential
seed: 3
applications:
  - {name: guarded, spec: "demo:guarded"}
  - {name: unguarded, spec: "demo:unguarded"}
scenarios: [tv_spoilers]
levels:
  red_teaming: {sessions: 24, max_turns: 3}
gates: {guardrail_violation: 0.3}
"""


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(PLAN)
    return path


def _sessions_per_app(db: Database, run_id: str) -> dict[str, int]:
    section = get_run(db, run_id).summary.sequential
    assert section is not None
    sessions = section.dialogues_per_group
    return {group.split("/")[0]: n for group, n in sessions.items()}


def test_until_gate_stops_the_settled_cell_early(sqlite_db: Database, plan: Path) -> None:
    args = ["run", str(plan), "--until", "gate", "--wave", "8", "--db", sqlite_db.url]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "gate decision settled" in result.output
    (run,) = list_runs(sqlite_db)
    assert run.status == "complete"
    sequential = run.summary.sequential
    assert sequential is not None and sequential.settings is not None
    cells = {c.application: c for c in sequential.cells}
    # The unguarded demo application leaks in every red-teaming dialogue: one wave shows
    # its rate is above the gate; the rule, its settings and the annotators are stored.
    assert cells["unguarded"].stopped == "gate fails" and cells["unguarded"].n == 8
    assert cells["unguarded"].low > 0.3
    assert sequential.settings["gate"] is True and sequential.annotators == ["reference"]
    per_app = _sessions_per_app(sqlite_db, run.id)
    assert per_app["unguarded"] == 8 and per_app["guarded"] % 8 in (0, 24 % 8)
    assert run.summary.sessions == sum(per_app.values()) < 48


class _Crash(Exception):
    pass


def test_a_stopped_sequential_run_resumes_to_the_same_dialogues(
    sqlite_db: Database, tmp_path: Path, plan: Path
) -> None:
    source = load_plan_file(plan)
    rule = StoppingRule(width=0.3, gate=True, wave=8)
    decider = SequentialDecider(sqlite_db, rule, annotators=["reference"], gates=source.plan.gates)
    calls = 0

    async def crash_after_two_waves(run_id: str, order: WaveOrder, ran: dict) -> WaveDecision:  # type: ignore[type-arg]
        nonlocal calls
        calls += 1
        if calls == 2:
            raise _Crash
        return await decider(run_id, order, ran)

    keep = SequentialSummary(settings=rule.model_dump(), annotators=["reference"])
    with pytest.raises(_Crash):
        asyncio.run(execute_in_waves(source, sqlite_db, crash_after_two_waves, wave=8, keep=keep))
    (run,) = list_runs(sqlite_db)
    assert run.summary.sequential is not None  # the rule is stored after the first wave
    result = runner.invoke(app, ["run", "--resume", run.id, "--db", sqlite_db.url])
    assert result.exit_code == 0, result.output
    resumed = _sessions_per_app(sqlite_db, run.id)

    fresh = Database(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        fresh_decider = SequentialDecider(
            fresh, rule, annotators=["reference"], gates=source.plan.gates
        )
        straight = asyncio.run(execute_in_waves(source, fresh, fresh_decider, wave=8))
        assert _sessions_per_app(fresh, straight.run_id) == resumed
        assert get_run(sqlite_db, run.id).status == "complete"
    finally:
        fresh.dispose()


def test_the_report_states_the_rule_and_each_cells_dialogues(
    sqlite_db: Database, plan: Path, tmp_path: Path
) -> None:
    """The report formats the stored stopping record: JSON, Markdown and HTML carry the
    rule and, per cell, the dialogues run and the interval the summary keeps."""
    args = ["run", str(plan), "--until", "gate", "--wave", "8", "--db", sqlite_db.url]
    assert runner.invoke(app, args).exit_code == 0
    (run,) = list_runs(sqlite_db)
    stored = run.summary.sequential
    assert stored is not None
    paths = write_report(sqlite_db, run.id, tmp_path / "report", bootstrap=0)
    (record,) = json.loads(paths.json.read_text())["sequential"]
    assert record["rule"] == stored.rule and record["run_id"] == run.id
    per_app = _sessions_per_app(sqlite_db, run.id)
    for cell, kept in zip(record["cells"], stored.cells, strict=True):
        assert (cell["n"], cell["low"], cell["high"], cell["stopped"]) == (
            kept.n,
            kept.low,
            kept.high,
            kept.stopped,
        )
        assert cell["ran"] == per_app[cell["application"]]
    unguarded = next(c for c in record["cells"] if c["application"] == "unguarded")
    assert unguarded["stopped"] == "gate fails" and unguarded["ran"] == 8
    markdown, page = paths.markdown.read_text(), paths.html.read_text()
    assert "Sequential stopping" in markdown and "gate decision settled" in markdown
    assert "| gate fails |" in markdown
    assert f'id="rates-sequential-{run.id}"' in page and "gate fails" in page


def test_a_fixed_run_has_no_stopping_record() -> None:
    assert sequential_record("r", RunSummary(sessions=3)) is None


def test_until_width_states_the_saving_against_the_fixed_plans(
    sqlite_db: Database, plan: Path, tmp_path: Path
) -> None:
    """Width alone reads the corrected Wilson interval: a cell without defects stops after
    16 dialogues (upper bound 0.240 ≤ 0.3; 0.405 after 8). The run's summary states what a
    fixed plan sized at the first wave's rates needs, and the report the same line."""
    args = ["run", str(plan), "--until", "width=0.3", "--wave", "8", "--db", sqlite_db.url]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (run,) = list_runs(sqlite_db)
    record = sequential_record(run.id, run.summary)
    assert record is not None and record.fixed_plans is not None
    assert record.fixed_plans.text() in " ".join(result.output.split())
    assert all(cell.fixed_plan is not None for cell in record.cells)
    assert all(
        cell.interval and cell.interval.startswith("corrected Wilson") for cell in record.cells
    )
    paths = write_report(sqlite_db, run.id, tmp_path / "report", bootstrap=0)
    assert record.fixed_plans.text() in paths.markdown.read_text()
    assert "a fixed plan sized at the first wave" in paths.html.read_text()


def test_a_sequential_runs_cells_show_the_confidence_sequence_it_stopped_on(
    sqlite_db: Database, plan: Path
) -> None:
    """One interval per cell: the stored sequence, labelled, not a fixed-n one beside it."""
    args = ["run", str(plan), "--until", "gate", "--wave", "8", "--db", sqlite_db.url]
    assert runner.invoke(app, args).exit_code == 0
    (run,) = list_runs(sqlite_db)
    assert run.summary.sequential is not None
    stopped = {c.application: c for c in run.summary.sequential.cells}["unguarded"]
    done = runner.invoke(app, ["defects", run.id, "--json", "--db", sqlite_db.url])
    assert done.exit_code == 0, done.output
    rates = json.loads(done.output)["rates"]
    group = {"source": "reference", **{k: getattr(stopped, k) for k in CELL}}
    (cell,) = [r for r in rates if r["group"] == group]
    assert (cell["ci_low"], cell["ci_high"]) == (stopped.low, stopped.high)
    assert cell["interval"].startswith("the interval the sequential run stopped on: hedged betting")
    # Grouped by less than a cell, a rate is no cell's: it keeps its own interval.
    coarse = runner.invoke(
        app, ["defects", run.id, "--by", "harm", "--json", "--db", sqlite_db.url]
    )
    assert all(r["interval"] != cell["interval"] for r in json.loads(coarse.output)["rates"])
