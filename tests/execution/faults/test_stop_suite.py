"""The stop suite: SIGTERM, SIGINT and ``runs cancel`` at random moments of a busy run.

The application is the built-in mock server over real HTTP with 150 ms of latency and no
faults, so every error turn would be one the stop made up. A stopped run must stop within
5 s, start no session after the stop, store no turn with an error, mark no cut session
complete, and a ``--resume`` must finish it with every work item exactly once.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from corix.domain import SessionStatus
from corix.domain.plan import load_plan
from corix.execution import RunStatus, execute_plan
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.storage import (
    Database,
    count_complete_sessions,
    list_runs,
    load_session,
    set_run_status_if,
)
from corix.storage.sessions import session_states

STOP_WITHIN_S = 5.0
SLACK = {"sigterm": 0.1, "sigint": 0.1, "cancel": 1.2}
"""Seconds after the stop within which a session may still start: a signal reaches the
event loop at its next turn; a cancel is seen when the run next reads its status (every
second)."""


def _plan(path: Path, base_url: str, *, concurrency: int, repeats: int) -> Path:
    path.write_text(
        f"name: stops\nseed: 5\nconcurrency: {concurrency}\n"
        "applications:\n  - name: slow\n"
        f'    spec: "openai:{base_url}"\n'
        "    options: {model: mock}\n"  # an adaptive bound: calls queue at its gate
        "scenarios: [tv_spoilers, meal_planner]\n"
        f"levels:\n  model_testing: {{repeats: {repeats}}}\n",
        encoding="utf-8",
    )
    return path


def _complete_sessions(db: Database) -> int:
    return count_complete_sessions(db, [run.id for run in list_runs(db)])


def _error_turns(db: Database) -> list[str]:
    """The errors of every stored turn, those of sessions the stop cut included."""
    failed = [state.id for state in session_states(db) if state.error_turns]
    turns = [turn for session_id in failed for turn in load_session(db, session_id).turns]
    return [turn.error for turn in turns if turn.error is not None]


def _started_after(db: Database, moment: datetime) -> int:
    return sum(1 for state in session_states(db) if state.started_at > moment)


def _work_keys(db: Database, run_id: str) -> Counter[str]:
    states = session_states(db, run_id)
    assert all(state.status is SessionStatus.COMPLETE for state in states)
    return Counter(state.work_key or "" for state in states)


async def _stop(how: str, db: Database) -> None:
    if how == "cancel":
        (run,) = list_runs(db)
        set_run_status_if(db, run.id, RunStatus.CANCELLED, allowed={"running"})
    else:
        os.kill(os.getpid(), signal.SIGTERM if how == "sigterm" else signal.SIGINT)


async def _stopped_run(
    db: Database, plan_path: Path, how: str, *, at_sessions: int, concurrency: int
) -> None:
    """Start a run, stop it with ``how`` once ``at_sessions`` sessions are stored, check
    the stop, then resume it and check the finished run."""
    plan = load_plan(plan_path)
    running = asyncio.create_task(execute_plan(plan, db, handle_signals=True))
    while _complete_sessions(db) < at_sessions and not running.done():
        await asyncio.sleep(0.01)
    if running.done():
        pytest.fail(f"the run finished before it could be stopped: {running.result()}")
    stopped_at = datetime.now(UTC)
    clock = time.monotonic()
    await _stop(how, db)
    result = await asyncio.wait_for(running, timeout=60)
    took = time.monotonic() - clock
    print(f"{how} at concurrency {concurrency}: stopped in {took:.2f} s")
    assert took < STOP_WITHIN_S, f"{how}: stopping took {took:.1f} s"
    assert result.status == (RunStatus.CANCELLED if how == "cancel" else RunStatus.INTERRUPTED)
    assert _error_turns(db) == []  # the mock never fails: an error turn would be made up
    assert _started_after(db, stopped_at + timedelta(seconds=SLACK[how])) == 0
    if how == "cancel":
        return
    cut = result.stats.sessions
    resumed = await execute_plan(plan, db, resume_run=result.run_id)
    assert resumed.status == RunStatus.COMPLETE, resumed.error
    assert resumed.discarded >= 1  # the sessions the stop cut were left for the resume
    keys = _work_keys(db, result.run_id)
    assert set(keys.values()) == {1} and sum(keys.values()) > cut
    assert _error_turns(db) == []


@pytest.mark.parametrize("how", ["sigterm", "sigint", "cancel"])
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_stop_at_concurrency_60_stores_nothing_that_did_not_happen(
    backend: str, how: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    db: Database = request.getfixturevalue(f"{backend}_db")
    at_sessions = random.Random(f"{backend}-{how}").randrange(5, 120)
    async with running_mock_server(MockServerConfig(latency_ms=150)) as base_url:
        plan_path = _plan(tmp_path / "plan.yaml", base_url, concurrency=60, repeats=8)
        await _stopped_run(db, plan_path, how, at_sessions=at_sessions, concurrency=60)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["sigterm", "sigint", "cancel"])
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_stop_at_concurrency_1000_stops_within_5_s(
    backend: str, how: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    db: Database = request.getfixturevalue(f"{backend}_db")
    at_sessions = random.Random(f"1000-{backend}-{how}").randrange(200, 1500)
    async with running_mock_server(MockServerConfig(latency_ms=150)) as base_url:
        plan_path = _plan(tmp_path / "plan.yaml", base_url, concurrency=1000, repeats=80)
        await _stopped_run(db, plan_path, how, at_sessions=at_sessions, concurrency=1000)
