"""The crash suite for runs: ``corix run`` and ``--resume`` killed with SIGKILL at random.

The application under test is the built-in mock server over real HTTP with 20% injected
faults (429s with a short Retry-After and 500s) and NUL bytes and lone surrogates in
every reply, which the OpenAI-compatible adapter sends back as history in the next turn.
Per backend, ``corix run`` is killed once a seeded random number of sessions is stored
(plus a few milliseconds, so kills land between commits too), each ``--resume`` is killed
likewise, three kills in all, then a last ``--resume`` finishes the run. The run must end
complete with every planned work item exactly once, no turn missing or doubled, and the
same dialogues as an uninterrupted run of the same plan.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from collections import Counter
from pathlib import Path

import pytest

from corix.domain import SessionStatus
from corix.domain.plan import load_plan
from corix.execution import execute_plan
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.storage import Database, count_complete_sessions, get_run, list_runs, load_session
from corix.storage.sessions import session_states

KILLS = 3
FAULTS = MockServerConfig(
    fail_429=0.1, fail_500=0.1, retry_after_s=0.05, latency_ms=15, hostile_bytes=True
)

Dialogue = tuple[tuple[int, str, str | None, str | None], ...]


def _plan_text(base_url: str) -> str:
    return (
        "name: crash\nseed: 3\nconcurrency: 4\n"
        "applications:\n  - name: hostile\n"
        f'    spec: "openai:{base_url}"\n'
        "    options: {model: mock, retries: 8}\n"
        "scenarios: [tv_spoilers, meal_planner]\n"
        "levels:\n  model_testing: {repeats: 1}\n"
    )


async def _corix(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "corix.cli.main",
        *args,
        env=os.environ.copy(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )


def _completed(db: Database) -> int:
    return count_complete_sessions(db, [run.id for run in list_runs(db)])


def _dialogues(db: Database, run_id: str) -> tuple[Counter[str], dict[str, Dialogue]]:
    """Work keys (with how often each is stored) and each item's turns, by work key."""
    sessions = session_states(db, run_id)
    assert all(state.status is SessionStatus.COMPLETE for state in sessions)
    keys = Counter(state.work_key or "" for state in sessions)
    dialogues = {
        state.work_key or "": tuple(
            (t.index, t.user_text, t.response_text, t.error)
            for t in load_session(db, state.id).turns
        )
        for state in sessions
    }
    return keys, dialogues


async def _kill_when(process: asyncio.subprocess.Process, db: Database, target: int) -> int:
    """SIGKILL ``process`` once ``target`` sessions are complete (and a few ms more);
    return how many were complete when it died."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 90
    while process.returncode is None and loop.time() < deadline and _completed(db) < target:
        await asyncio.sleep(0.02)
    await asyncio.sleep((target % 5) / 100)  # land anywhere, not just after a commit
    assert process.returncode is None, "the run finished before it could be killed"
    process.send_signal(signal.SIGKILL)
    await process.wait()
    return _completed(db)


# A soak (several kill -9 rounds on each backend); the default run kills a run once in
# tests/execution/test_runner.py and tests/execution/faults/test_run_lease.py.
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_kill_9_during_run_and_resume_loses_nothing_and_doubles_nothing(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    db: Database = request.getfixturevalue(f"{backend}_db")
    reference_db = Database(f"sqlite:///{tmp_path / 'uninterrupted.db'}")
    rng = random.Random(f"run-{backend}")
    plan_path = tmp_path / "plan.yaml"
    try:
        async with running_mock_server(FAULTS) as base_url:
            plan_path.write_text(_plan_text(base_url), encoding="utf-8")
            reference = await execute_plan(load_plan(plan_path), reference_db)
            planned, expected = _dialogues(reference_db, reference.run_id)
            assert reference.status == "complete" and len(planned) > 30

            targets = sorted(rng.sample(range(2, len(planned) - 8), KILLS))
            process = await _corix("run", str(plan_path), "--db", db.url)
            at_kill = [await _kill_when(process, db, targets[0])]
            (run,) = list_runs(db)
            for target in targets[1:]:
                assert get_run(db, run.id).status == "running"  # killed, unmarked
                process = await _corix("run", "--resume", run.id, "--db", db.url)
                at_kill.append(await _kill_when(process, db, max(target, at_kill[-1] + 1)))
            process = await _corix("run", "--resume", run.id, "--db", db.url)
            output, _ = await asyncio.wait_for(process.communicate(), timeout=180)
        assert process.returncode == 0, output.decode(errors="replace")
        print(f"{backend}: {KILLS} kills at {at_kill} of {len(planned)} sessions")
        assert all(0 < n < len(planned) for n in at_kill), at_kill

        stored, dialogues = _dialogues(db, run.id)
        assert stored == planned  # every work item, each exactly once: no gap, no duplicate
        assert dialogues == expected  # turn by turn what an uninterrupted run stores
        assert all([t[0] for t in d] == list(range(len(d))) for d in dialogues.values())
        assert any("\ufffd" in (t[2] or "") for d in dialogues.values() for t in d)
        finished = get_run(db, run.id)
        assert finished.status == "complete"
        assert finished.summary.sessions == len(planned)
        assert len(finished.summary.invocations) == 1  # killed invocations never report
    finally:
        reference_db.dispose()
