"""Each cell's calls, tokens and cost by source (application, simulated user, judge) at
the prices of the plan and of the annotation jobs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import inspect, text
from typer.testing import CliRunner

from corix.cli.main import app
from corix.domain import (
    AnnotationJobSettings,
    ApplicationEntry,
    EndpointIdentity,
    Level,
    LevelSettings,
    ModelUsage,
    Plan,
    Provenance,
    RunSummary,
    SessionSource,
    TurnRecord,
)
from corix.execution import execute_plan
from corix.llm import EndpointConfig
from corix.measurement import cell_costs
from corix.report import write_report
from corix.storage import (
    Database,
    NewPass,
    NewSession,
    RecordWriter,
    SessionEnd,
    create_run,
    ensure_application,
    record_annotation_job,
)
from corix.storage.database import alembic_config

PLAN = {
    "name": "hand",
    "applications": [
        # The short name of a price (as old plans give it) counts too.
        {"name": "priced", "spec": "openai:mock?model=m", "options": {"price_prompt": 2}},
        {"name": "free", "spec": "demo:guarded"},
    ],
    "scenarios": ["tv_spoilers"],
    "levels": {
        "red_teaming": {
            "engine": "llm",
            "simulator": {"base_url": "mock", "model": "s", "price_per_1k_completion": 10},
        },
        "model_testing": {},
    },
}


async def _store(db: Database) -> str:
    """Two cells with usage chosen by hand: 'priced' red teaming (two sessions), 'free'
    model testing (one session); one LLM judge pass on each session."""
    create_run(db, "run-hand", name="hand", plan=Plan.model_validate(PLAN), seed=0)
    priced = ensure_application(db, "priced", "openai:mock")
    free = ensure_application(db, "free", "demo:guarded")
    sessions = [
        ("a", priced, Level.RED_TEAMING, SessionSource.SIMULATED, [(100, 10), (200, 20)], 3),
        ("b", priced, Level.RED_TEAMING, SessionSource.SIMULATED, [(300, 30)], 2),
        ("c", free, Level.MODEL_TESTING, SessionSource.SCRIPTED, [(None, None)], 0),
    ]
    async with RecordWriter(db) as writer:
        for session_id, app_id, level, source, turns, simulator_calls in sessions:
            writer.start_session(
                NewSession(
                    id=session_id,
                    run_id="run-hand",
                    work_key=session_id,
                    application_id=app_id,
                    scenario="tv_spoilers",
                    level=level,
                    source=source,
                    provenance=Provenance(application="x", scenario="tv_spoilers"),
                )
            )
            for index, (prompt, completion) in enumerate(turns):
                writer.add_turn(
                    session_id,
                    TurnRecord(
                        index=index,
                        user_text="hi",
                        response_text="hello",
                        prompt_tokens=prompt,
                        completion_tokens=completion,
                    ),
                )
            # A script's session ends without a simulator's count: none was made.
            simulated = source is SessionSource.SIMULATED
            usage = ModelUsage(calls=simulator_calls, prompt_tokens=50 * simulator_calls)
            writer.finish_session(
                SessionEnd(session_id, end_reason=None, simulator=usage if simulated else None)
            )
        for session_id, attempts in (("a", 1), ("b", 2), ("c", 1)):
            details = {"attempts": attempts, "prompt_tokens": 400, "completion_tokens": 40}
            writer.add_pass(_pass(session_id, "llm:j", "llm", {"details": details}))
            writer.add_pass(_pass(session_id, "reference", "reference", {}))
    record_annotation_job(db, "run-hand", _job(3.0, 5.0))
    return "run-hand"


def _pass(session_id: str, annotator: str, kind: str, provenance: dict[str, object]) -> NewPass:
    return NewPass(
        session_id=session_id,
        category="risk_assessment",
        annotator=annotator,
        annotator_kind=kind,
        pass_no=0,
        repeat_no=0,
        ok=True,
        error=None,
        provenance=provenance,
        answers=(),
    )


def _job(prompt: float | None, completion: float | None) -> AnnotationJobSettings:
    endpoint = EndpointIdentity(
        name="annotator",
        transport="mock",
        base_url="",
        model="j",
        structured_output="auto",
        timeout_s=60,
        price_per_1k_prompt=prompt,
        price_per_1k_completion=completion,
    )
    return AnnotationJobSettings(
        annotator="llm",
        stored_as="llm:j",
        kind="llm",
        passes=1,
        repeats=1,
        adaptive=False,
        categories=("risk_assessment",),
        harms=(),
        schema_version="aria-1.0",
        harm_pack_versions={},
        seed=0,
        max_reasks=2,
        endpoint=endpoint,
    )


async def test_each_source_is_counted_and_priced_by_hand(any_db: Database) -> None:
    run_id = await _store(any_db)
    costs = {c.group["application"]: c for c in cell_costs(any_db, [run_id])}
    priced, free = costs["priced"], costs["free"]
    assert priced.dialogues == 2 and free.dialogues == 1
    # Application: one call per turn; 600 prompt tokens at 2 per 1,000, completion unpriced.
    assert (priced.application.calls, priced.application.prompt_tokens) == (3, 600)
    assert priced.application.completion_tokens == 60
    assert priced.application.cost == pytest.approx(600 * 2 / 1000)
    # Simulator: 3 + 2 calls of 50 prompt tokens each, only completions priced (none here).
    assert (priced.simulator.calls, priced.simulator.prompt_tokens) == (5, 250)
    assert priced.simulator.cost == 0.0
    # Judge: 1 + 2 attempts, 800 + 80 tokens at 3 and 5 per 1,000; the rules' passes add none.
    assert (priced.judge.calls, priced.judge.prompt_tokens, priced.judge.completion_tokens) == (
        3,
        800,
        80,
    )
    assert priced.judge.cost == pytest.approx((800 * 3 + 80 * 5) / 1000)
    assert priced.total.calls == 3 + 5 + 3
    assert priced.total.cost == pytest.approx(1.2 + 0 + 2.8)
    # The demo application has calls but no price: unknown, and so is the cell's total.
    assert free.application.calls == 1 and free.application.cost is None
    assert (free.simulator.calls, free.simulator.cost) == (0, 0.0)  # a script: no simulator
    assert free.judge.calls == 1 and free.judge.cost == pytest.approx((400 * 3 + 40 * 5) / 1000)
    assert free.total.calls == 2 and free.total.cost is None


async def test_unknown_prices_and_unrecorded_calls_are_none(sqlite_db: Database) -> None:
    run_id = await _store(sqlite_db)
    record_annotation_job(sqlite_db, run_id, _job(1.0, 1.0))  # a second price: which one?
    with sqlite_db.session() as s:  # as a session stored before simulator calls were
        s.execute(text("UPDATE sessions SET simulator_calls = NULL WHERE id = 'b'"))
    (_free, priced) = cell_costs(sqlite_db, [run_id])
    assert priced.judge.calls == 3 and priced.judge.cost is None
    assert priced.simulator.calls is None and priced.simulator.cost is None
    assert priced.total.calls is None and priced.total.cost is None


async def test_the_migration_fills_what_the_record_tells(any_db: Database) -> None:
    run_id = await _store(any_db)
    config = alembic_config(any_db.engine)
    command.downgrade(config, "web_scale")
    assert "simulator_calls" not in {
        c["name"] for c in inspect(any_db.engine).get_columns("sessions")
    }
    command.upgrade(config, "head")
    (free, priced) = cell_costs(any_db, [run_id])
    # Passes are filled from their details; the scripted session made no simulator calls;
    # simulated sessions stored before the columns existed are not recorded.
    assert priced.judge.calls == 3 and free.judge.calls == 1
    assert free.simulator.calls == 0
    assert priced.simulator.calls is None and priced.simulator.cost is None
    assert priced.application.calls == 3


def _mock_run(db: Database) -> tuple[str, RunSummary, dict[str, Any]]:
    """A run on the mock model (a priced application and the demo one; scripted model
    testing, and red teaming by an LLM simulated user), judged by the LLM annotator on
    the mock: its id, the run's stats and the annotation summary."""
    simulator = EndpointConfig(
        base_url="mock", model="corix-mock", price_per_1k_prompt=0.5, price_per_1k_completion=1
    )
    plan = Plan(
        name="priced",
        applications=[
            ApplicationEntry(
                name="priced",
                spec="openai:mock?model=corix-mock",
                options={"price_per_1k_prompt": 1.5, "price_per_1k_completion": 2.0},
            ),
            ApplicationEntry(name="demo", spec="demo:guarded"),
        ],
        scenarios=["tv_spoilers"],
        levels={
            Level.RED_TEAMING: LevelSettings(
                sessions=2, max_turns=2, engine="llm", simulator=simulator
            ),
            Level.MODEL_TESTING: LevelSettings(sessions=2),
        },
    )
    result = asyncio.run(execute_plan(plan, db))
    args = ["annotate", result.run_id, "--annotator", "llm", "--endpoint", "mock"]
    args += ["--categories", "risk_assessment", "--price-prompt", "3", "--price-completion", "4"]
    annotated = CliRunner().invoke(app, [*args, "--db", db.url, "--json"])
    assert annotated.exit_code == 0, annotated.output
    return result.run_id, result.stats, json.loads(annotated.output)


def test_a_mock_run_counts_every_source(sqlite_db: Database) -> None:
    run_id, stats, judged = _mock_run(sqlite_db)
    costs = cell_costs(sqlite_db, [run_id])
    cells = {(c.group["application"], c.group["level"]): c for c in costs}
    priced = cells["priced", "model_testing"]
    assert priced.application.calls == priced.dialogues == 2  # one scripted turn each
    tokens = (priced.application.prompt_tokens or 0, priced.application.completion_tokens or 0)
    assert priced.application.cost == pytest.approx((tokens[0] * 1.5 + tokens[1] * 2) / 1000)
    assert priced.simulator.calls == 0 and cells["demo", "model_testing"].application.cost is None
    # The simulated users' tokens are the ones the client counted for the simulator.
    red = [c for c in costs if c.group["level"] == "red_teaming"]
    simulated = sum(c.simulator.prompt_tokens or 0 for c in red)
    assert simulated == stats.usage.simulator_prompt_tokens > 0
    simulated = sum(c.simulator.completion_tokens or 0 for c in red)
    assert simulated == stats.usage.simulator_completion_tokens
    for cell in red:  # a message per turn and the questionnaire, at least
        sim = cell.simulator
        assert sim.calls is not None and cell.application.calls is not None
        assert sim.calls >= cell.application.calls + cell.dialogues
        assert sim.prompt_tokens is not None and sim.completion_tokens is not None
        assert sim.cost == pytest.approx((sim.prompt_tokens * 0.5 + sim.completion_tokens) / 1000)
    # The judge's calls and tokens are the annotation summary's, cell by cell summed.
    assert sum(c.judge.calls or 0 for c in costs) == judged["model_calls"] > 0
    assert sum(c.judge.prompt_tokens or 0 for c in costs) == judged["prompt_tokens"]
    judge_cost = (judged["prompt_tokens"] * 3 + judged["completion_tokens"] * 4) / 1000
    assert sum(c.judge.cost or 0 for c in costs) == pytest.approx(judge_cost)
    shown = CliRunner().invoke(app, ["defects", run_id, "--db", sqlite_db.url, "--cost", "--json"])
    assert shown.exit_code == 0, shown.output
    document = json.loads(shown.output)["cost"]
    assert document == [c.model_dump(mode="json") for c in costs]
    table = CliRunner().invoke(app, ["defects", run_id, "--db", sqlite_db.url, "--cost"])
    assert table.exit_code == 0 and "simulator calls" in table.output


@pytest.mark.slow
def test_the_report_shows_each_cells_cost(sqlite_db: Database, tmp_path: Path) -> None:
    run_id, _, _ = _mock_run(sqlite_db)
    costs = cell_costs(sqlite_db, [run_id])
    paths = write_report(sqlite_db, run_id, tmp_path, trees=(), bootstrap=0)
    reported = json.loads(paths.json.read_text(encoding="utf-8"))["cell_costs"]
    assert reported == [c.model_dump(mode="json") for c in costs]
    judge = costs[0].judge
    shown_judge = f"{judge.calls} · {judge.prompt_tokens} + {judge.completion_tokens}"
    for path in (paths.markdown, paths.html):
        text = path.read_text(encoding="utf-8")
        assert "What each cell cost" in text and shown_judge in text
