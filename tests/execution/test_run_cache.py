"""`corix run --cache FILE`: a rerun of a plan asks no model again and stores the same turns."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.cli.main import app
from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.llm.mock_server import running_mock_server
from corix.storage import Database, list_runs, load_session
from corix.storage.sessions import session_states

runner = CliRunner()


def _requests_seen(base_url: str) -> int:
    stats = base_url.removesuffix("/v1") + "/mock/stats"
    with urllib.request.urlopen(stats, timeout=5) as response:
        return int(json.load(response)["requests"])


def _replies(db: Database, run_id: str) -> list[tuple[str, int, str | None]]:
    """Each stored reply of the run by work item (without the application) and turn."""
    replies = [
        (str(state.work_key).split("/", 1)[1], turn.index, turn.response_text)
        for state in session_states(db, run_id)
        for turn in load_session(db, state.id).turns
    ]
    return sorted(replies, key=lambda reply: reply[:2])


async def test_a_cached_rerun_asks_no_model(sqlite_db: Database, tmp_path: Path) -> None:
    async with running_mock_server() as base_url:
        plan = Plan(
            name="cached",
            applications=[
                ApplicationEntry(name="m", spec=f"openai:{base_url}?model=corix-mock&timeout_s=5")
            ],
            scenarios=["tv_spoilers"],
            levels={Level.MODEL_TESTING: LevelSettings(repeats=1)},
            concurrency=4,
            cache=str(tmp_path / "replies.sqlite"),
        )
        first = await execute_plan(plan, sqlite_db)
        asked = await asyncio.to_thread(_requests_seen, base_url)
        second = await execute_plan(plan, sqlite_db)
        asked_again = await asyncio.to_thread(_requests_seen, base_url)
    assert first.stats.usage.model_calls == asked > 0
    assert first.stats.usage.cache_hits == 0
    assert asked_again == asked  # the rerun reached no model
    assert second.stats.usage.cache_hits == second.stats.usage.model_calls == asked
    assert second.stats.usage.cost == 0
    assert _replies(sqlite_db, second.run_id) == _replies(sqlite_db, first.run_id)


@pytest.fixture
def served_mock() -> Iterator[str]:
    """The mock server in a thread of its own, for commands that run their own event loop."""
    ready: list[str] = []
    started, stop = threading.Event(), threading.Event()

    async def serve() -> None:
        async with running_mock_server() as base_url:
            ready.append(base_url)
            started.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert started.wait(10)
    yield ready[0]
    stop.set()
    thread.join(10)


PLAN = """\
name: cached-cli
applications:
  - name: m
    spec: "openai:{base_url}?model=corix-mock&timeout_s=5"
scenarios: [pathfinder]
levels:
  model_testing: {{repeats: 1}}
"""


def test_run_cache_option_is_kept_for_resume(served_mock: str, tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'corix.db'}")
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(base_url=served_mock), encoding="utf-8")
    cache = tmp_path / "cache" / "replies.sqlite"
    for _ in range(2):
        result = runner.invoke(app, ["run", str(plan), "--cache", str(cache), "--db", db.url])
        assert result.exit_code == 0, result.output
    first, second = list_runs(db)
    assert isinstance(first.plan, Plan) and isinstance(second.plan, Plan)
    assert first.plan.cache == second.plan.cache == str(cache.resolve())
    assert second.summary.usage.cache_hits == second.summary.usage.model_calls > 0
    assert _requests_seen(served_mock) == first.summary.usage.model_calls
    refused = runner.invoke(app, ["run", "--resume", first.id, "--cache", str(cache)])
    assert refused.exit_code == 2
    db.dispose()
