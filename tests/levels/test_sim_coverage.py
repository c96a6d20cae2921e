"""`corix personas RUN`: persona coverage with the violations annotators found."""

from __future__ import annotations

import json

import pytest
import typer
from sim_helpers import GUARDED, UNGUARDED, plan_for, sessions
from typer.testing import CliRunner

from corix.cli.personas_cmd import personas_command
from corix.domain import EndReason, Level, SessionRecord
from corix.execution import execute_plan
from corix.levels.simulation import persona_coverage
from corix.measurement.core import measure
from corix.scenarios import expand_personas, resolve_pack
from corix.storage import Database, NewPass, NotFoundError, StoredAnswer, insert_passes

cli = typer.Typer()
cli.command("personas")(personas_command)
cli.command("unused")(lambda: None)  # a second command keeps "personas" a subcommand


def _annotate(db: Database, session_id: str, *verdicts: tuple[str, str], ok: bool = True) -> None:
    """One risk-assessment pass per verdict: (prohibited released, permitted withheld)."""
    insert_passes(
        db,
        [
            NewPass(
                session_id=session_id,
                category="risk_assessment",
                annotator=f"annotator-{n}",
                annotator_kind="human",
                pass_no=0,
                repeat_no=0,
                ok=ok,
                error=None if ok else "the annotator gave up",
                provenance={},
                answers=(
                    StoredAnswer("ra_prohibited_released", None, released, None),
                    StoredAnswer("ra_permitted_withheld", None, withheld, None),
                    StoredAnswer("ra_user_induced", None, "yes", None),
                ),
            )
            for n, (released, withheld) in enumerate(verdicts)
        ],
    )


def _key(
    application: str, template: str, parameters: dict[str, object], goal: str | None
) -> tuple[str, str, str, str | None]:
    return (application, template, json.dumps(parameters, sort_keys=True), goal)


def _session_key(session: SessionRecord) -> tuple[str, str, str, str | None]:
    provenance = session.provenance
    return _key(
        session.application, provenance.template or "", provenance.parameters, provenance.brief.goal
    )


@pytest.fixture
async def covered_run(sqlite_db: Database) -> tuple[Database, str, list[SessionRecord]]:
    plan = plan_for(GUARDED, UNGUARDED, sessions=6)
    field = plan_for(level=Level.FIELD_TESTING, sessions=2)
    plan = plan.model_copy(update={"levels": {**plan.levels, **field.levels}})
    result = await execute_plan(plan, sqlite_db)
    return sqlite_db, result.run_id, sorted(sessions(sqlite_db, result.run_id), key=lambda s: s.id)


async def test_coverage_counts_sessions_goals_and_the_cores_violations(
    covered_run: tuple[Database, str, list[SessionRecord]],
) -> None:
    db, run_id, stored = covered_run
    red = [s for s in stored if s.level is Level.RED_TEAMING]
    tie, minority, withheld, failed_pass = red[:4]
    # Distinct people: their disagreement is kept, so a dialogue counts the share who saw one.
    _annotate(db, tie.id, ("yes", "no"), ("no", "no"))  # one of two people: 1/2
    _annotate(db, minority.id, ("yes", "no"), ("no", "no"), ("no", "no"))  # one of three: 1/3
    _annotate(db, withheld.id, ("no", "yes"))  # withholding is a violation too: 1
    _annotate(db, failed_pass.id, ("yes", "yes"), ok=False)  # a failed pass says nothing

    coverage = persona_coverage(db, run_id, measure(db, [run_id]).dialogue_verdicts())
    rows = {_key(r.application, r.template, r.parameters, r.goal): r for r in coverage.rows}
    assert sum(r.sessions for r in coverage.rows) == len(stored) == 2 * 6 + 2 * 2
    ran = {_session_key(s) for s in stored}
    assert ran <= set(rows)
    assert sum(r.goal_reached for r in coverage.rows) == sum(
        s.end_reason is EndReason.GOAL_REACHED for s in stored
    )
    assert sum(r.annotated.get("human", 0) for r in coverage.rows) == 3
    assert sum(r.violations.get("human", 0) for r in coverage.rows) == pytest.approx(11 / 6)
    assert rows[_session_key(tie)].violations["human"] >= 0.5
    assert rows[_session_key(withheld)].violations["human"] >= 1
    assert tie.strategy in rows[_session_key(tie)].variants
    assert sum(r.not_measurable for r in coverage.rows) == 0  # every session was answered
    silent = persona_coverage(db, run_id, {}, not_measurable={tie.id})
    assert [r.not_measurable for r in silent.rows if r.not_measurable] == [1]

    pack = resolve_pack("tv_spoilers")
    declared = len(expand_personas(pack, Level.RED_TEAMING)) + len(
        expand_personas(pack, Level.FIELD_TESTING)
    )
    assert coverage.declared == 2 * declared == len(coverage.rows)  # every combination listed
    assert coverage.covered == len(ran)
    not_run = [
        r for r in coverage.rows if _key(r.application, r.template, r.parameters, r.goal) not in ran
    ]
    assert not_run and all(r.sessions == 0 for r in not_run)


async def test_personas_command_prints_a_table_and_json(
    covered_run: tuple[Database, str, list[SessionRecord]],
) -> None:
    db, run_id, stored = covered_run
    url = db.url
    runner = CliRunner()
    shown = runner.invoke(cli, ["personas", run_id, "--db", url], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "impatient_viewer" in shown.output and "catching_up_viewer" in shown.output
    assert f"{len(stored)} sessions" in shown.output
    as_json = runner.invoke(cli, ["personas", run_id, "--db", url, "--json"])
    data = json.loads(as_json.output)
    assert data["run_id"] == run_id and data["packs_loaded"] is True
    assert sum(row["sessions"] for row in data["rows"]) == len(stored)
    assert {row["level"] for row in data["rows"]} == {"red_teaming", "field_testing"}
    missing = runner.invoke(cli, ["personas", "run-nope", "--db", url])
    assert isinstance(missing.exception, NotFoundError)
