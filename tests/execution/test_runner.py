"""Running plans end to end on real SQLite: counts, provenance, failures, resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from corix.domain import (
    ApplicationEntry,
    EndReason,
    Level,
    LevelSettings,
    Plan,
    SessionSource,
    SessionStatus,
)
from corix.domain.plan import load_plan
from corix.errors import ConfigError, CorixError
from corix.execution import execute_plan
from corix.llm import EndpointConfig
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.scenarios import expand_model_tests, resolve_pack
from corix.storage import (
    Database,
    completed_work_keys,
    count_complete_sessions,
    get_run,
    iter_sessions,
    list_runs,
)
from corix.storage.sessions import session_states

TESTS_DIR = Path(__file__).resolve().parents[1]


def _plan(*apps: ApplicationEntry, scenarios: list[str] | None = None, **kw: object) -> Plan:
    return Plan(
        name="t",
        seed=5,
        applications=list(apps),
        scenarios=scenarios or ["tv_spoilers"],
        levels={Level.MODEL_TESTING: LevelSettings(**kw)},
        concurrency=8,
    )


async def test_model_testing_stores_every_scripted_test(any_db: Database) -> None:
    plan = _plan(
        ApplicationEntry(name="g", spec="demo:guarded"),
        ApplicationEntry(name="u", spec="demo:unguarded"),
    )
    tests = expand_model_tests(resolve_pack("tv_spoilers"), 5)
    result = await execute_plan(plan, any_db)
    sessions = list(iter_sessions(any_db, result.run_id))
    assert len(sessions) == 2 * len(tests) == result.stats.sessions
    assert get_run(any_db, result.run_id).status == "complete"
    keys = Counter(state.work_key for state in session_states(any_db))
    expected = {f"{app}/tv_spoilers/model_testing/{t.key}/0" for app in ("g", "u") for t in tests}
    assert keys == Counter(expected)  # each test exactly once per application
    first = sessions[0]
    assert first.source is SessionSource.SCRIPTED and first.level is Level.MODEL_TESTING
    assert first.provenance.seed == 5 and first.provenance.scenario_version == "1.2"
    assert first.provenance.application_version and first.provenance.template
    multi = [s for s in sessions if len(s.turns) > 1]
    assert multi, "the pack has multi-turn scripts"
    assert all([t.index for t in s.turns] == list(range(len(s.turns))) for s in sessions)


async def test_failing_application_is_recorded_and_the_run_finishes(sqlite_db: Database) -> None:
    plan = _plan(
        ApplicationEntry(
            name="flaky", spec="python:support.apps:EchoApp", options={"fail_on": "episode"}
        )
    )
    sys.path.insert(0, str(TESTS_DIR))
    try:
        result = await execute_plan(plan, sqlite_db)
    finally:
        sys.path.remove(str(TESTS_DIR))
    sessions = list(iter_sessions(sqlite_db, result.run_id))
    failed = [s for s in sessions if s.end_reason is EndReason.APP_ERROR]
    assert failed and len(failed) == result.stats.failed_sessions
    for session in failed:
        last = session.turns[-1]
        assert last.error == "RuntimeError: cannot handle 'episode'"
        assert "episode" in last.user_text.lower()
    assert result.stats.error_turns == len(failed)
    assert len(sessions) == result.stats.sessions


async def test_unknown_adapter_fails_before_anything_runs(sqlite_db: Database) -> None:
    plan = _plan(ApplicationEntry(name="x", spec="nope:thing"))
    with pytest.raises(CorixError, match="unknown adapter kind 'nope'"):
        await execute_plan(plan, sqlite_db)


def test_malformed_plan_names_file_field_and_line(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: p\napplications:\n  - name: a\n    spec: demo:guarded\nscenarios: [tv_spoilers]\n"
        "levels:\n  model_testing:\n    max_turns: 0\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_plan(path)
    assert info.value.field == "levels.model_testing.max_turns" and info.value.line == 8


def _corix(*args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "corix.cli.main", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def test_kill_9_then_resume_gives_every_session_once(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'kill.db'}"
    plan_path = tmp_path / "plan.yaml"
    plan_path.write_text(
        "name: killme\nseed: 1\nconcurrency: 4\n"
        "applications:\n  - name: slow\n    spec: python:support.apps:EchoApp\n"
        "    options: {delay_ms: 40}\n"
        "scenarios: [tv_spoilers, meal_planner, pathfinder]\n"
        "levels:\n  model_testing: {repeats: 2}\n",
        encoding="utf-8",
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(TESTS_DIR), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
        "CORIX_DB": db_url,
    }
    process = _corix("run", str(plan_path), env=env)
    db = Database(db_url)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = count_complete_sessions(db, [run.id for run in list_runs(db)])
        if done >= 20:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    (run,) = list_runs(db)
    assert run.status == "running"  # killed: never marked finished
    planned = (
        sum(
            len(expand_model_tests(resolve_pack(n), 1))
            for n in ("tv_spoilers", "meal_planner", "pathfinder")
        )
        * 2
    )
    before = len(completed_work_keys(db, run.id))
    assert 20 <= before < planned

    resumed = _corix("run", "--resume", run.id, env=env)
    output = resumed.communicate(timeout=120)[0].decode()
    assert resumed.returncode == 0, output
    states = session_states(db)
    keys = [state.work_key for state in states if state.run_id == run.id]
    incomplete = sum(state.status is not SessionStatus.COMPLETE for state in states)
    assert len(keys) == len(set(keys)) == planned  # no duplicates, no gaps
    assert incomplete == 0
    # Every stored session is complete, so these are all the stored turns.
    per_session = [sorted(t.index for t in session.turns) for session in iter_sessions(db)]
    assert sum(map(len, per_session)) == sum(state.turns for state in states)
    assert all(v == list(range(len(v))) for v in per_session)
    assert get_run(db, run.id).status == "complete"
    db.dispose()


async def test_summary_counts_model_calls_and_retries(sqlite_db: Database) -> None:
    # Every fourth request fails once with a 500; the client retries it.
    async with running_mock_server(MockServerConfig(fail_500=0.25)) as base_url:
        plan = _plan(
            ApplicationEntry(
                name="m",
                spec=f"openai:{base_url}?model=corix-mock&max_retries=3&timeout_s=5",
                options={"system": "You are the Halloway Signal guide."},
            ),
            sessions=4,
        )
        result = await execute_plan(plan, sqlite_db)
    stats = result.stats
    assert stats.error_turns == 0
    assert stats.usage.model_calls == stats.turns
    assert stats.usage.retries >= 1
    assert stats.usage.failed_calls == 0
    assert stats.prompt_tokens > 0
    # The system prompt is provenance (for guideline-leakage checks), stored with each session.
    session = next(iter_sessions(sqlite_db, result.run_id))
    assert session.provenance.system_prompt == "You are the Halloway Signal guide."


async def test_a_dialogues_user_and_application_share_their_connections(
    sqlite_db: Database,
) -> None:
    # Six simulated users talk to an application on the same server, one call of each
    # dialogue in flight at a time: six connections carry everything, where a pool per
    # client would open six for the users and six more for the application.
    async with running_mock_server(MockServerConfig(latency_ms=50)) as base_url:
        plan = Plan(
            name="t",
            seed=5,
            applications=[
                ApplicationEntry(
                    name="m", spec=f"openai:{base_url}?model=corix-mock&max_concurrency=6"
                )
            ],
            scenarios=["tv_spoilers"],
            levels={
                Level.RED_TEAMING: LevelSettings(
                    sessions=6,
                    max_turns=3,
                    engine="llm",
                    simulator=EndpointConfig(base_url=base_url, model="corix-mock"),
                )
            },
            concurrency=6,
        )
        result = await execute_plan(plan, sqlite_db)
        async with httpx.AsyncClient() as client:
            stats = (await client.get(base_url.removesuffix("/v1") + "/mock/stats")).json()
    assert result.stats.turns == 6 * 3 and result.stats.error_turns == 0
    assert stats["requests"] >= 6 * (2 * 3)  # every turn is a user call and an application call
    assert stats["connections"] <= 6
