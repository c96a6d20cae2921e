"""Two Ray nodes on this machine: kill a node, kill the broker, resume — nothing lost.

The head and the second node are separate sets of Ray processes (``ray.cluster_utils``,
what ``ray start`` runs), with one CPU each, so each of the two workers lands on its own
node. corix joins the cluster by its address, as ``--ray-address`` does. The processes
are this test's own: they are removed at its end (never ``ray stop``, which would stop
every Ray on the machine). Slow (about a minute): ``pytest -m slow``.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.execution.run_status import RunStatus
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.storage import Database
from corix.storage.sessions import session_states

ray = pytest.importorskip("ray", reason="the Ray executor needs the ray extra")
cluster_utils = pytest.importorskip("ray.cluster_utils")

from corix.execution.ray_executor import RayRunExecutor  # noqa: E402 (after the skip)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SESSIONS = 30


@pytest.fixture
def two_nodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    # The test's nodes run without token authentication (its GCS does not start in token
    # mode here); the driver must say so, or a token file on this machine would make it
    # connect in token mode, and a mismatch cancels its actors.
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    try:
        cluster = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        second = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
    except Exception as exc:  # e.g. no shared memory in a sandbox
        pytest.skip(f"two Ray nodes cannot start here: {type(exc).__name__}: {exc}")
    try:
        yield cluster, second
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


def _plan(base_url: str, name: str) -> Plan:
    app = f"openai:{base_url}?model=corix-mock&rpm=1200&name=limited&retries=0"
    return Plan(
        name=name,
        seed=5,
        applications=[ApplicationEntry(name="a", spec=app)],
        scenarios=["tv_spoilers"],
        levels={Level.RED_TEAMING: LevelSettings(sessions=SESSIONS, max_turns=3)},
        concurrency=4,
    )


def _sessions(db: Database, run_id: str) -> Counter[tuple[str | None, str, str | None]]:
    states = session_states(db, run_id)
    return Counter((state.work_key, state.status, state.end_reason) for state in states)


def _whole(db: Database, run_id: str) -> None:
    """0 lost, 0 duplicated, 0 sessions blamed on the application."""
    stored = _sessions(db, run_id)
    keys = Counter(key for key, _, _ in stored.elements())
    assert len(keys) == SESSIONS and set(keys.values()) == {1}
    assert {status for _, status, _ in stored} == {"complete"}
    assert not [reason for _, _, reason in stored if reason == "app_error"]


async def test_a_dead_node_and_a_dead_broker_lose_nothing(
    two_nodes: tuple[Any, Any], sqlite_db: Database
) -> None:
    cluster, second = two_nodes
    async with running_mock_server(MockServerConfig(latency_ms=100)) as base_url:
        executor = RayRunExecutor(address=cluster.address, workers=2)
        done: list[str] = []

        def kill_the_second_node(item: Any) -> None:
            done.append(item.key)
            if len(done) == 3:
                cluster.remove_node(second, allow_graceful=False)

        first = await execute_plan(
            _plan(base_url, "node"),
            sqlite_db,
            executor=executor,
            on_session_done=kill_the_second_node,
        )
        assert first.status is RunStatus.COMPLETE, first.error
        _whole(sqlite_db, first.run_id)

        # The second node is gone: both workers share the head's CPU now.
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        executor = RayRunExecutor(address=cluster.address, workers=2)
        killed: list[str] = []

        def kill_the_broker(item: Any) -> None:
            killed.append(item.key)
            if len(killed) == 3:
                assert executor.broker_pid is not None
                os.kill(executor.broker_pid, signal.SIGKILL)

        second_run = await execute_plan(
            _plan(base_url, "broker"),
            sqlite_db,
            executor=executor,
            on_session_done=kill_the_broker,
        )
        assert second_run.status is RunStatus.COMPLETE, second_run.error
        _whole(sqlite_db, second_run.run_id)

        # Resuming a finished run adds nothing.
        resumed = await execute_plan(
            _plan(base_url, "node"),
            sqlite_db,
            resume_run=first.run_id,
            executor=RayRunExecutor(address=cluster.address, workers=2),
        )
    assert resumed.status is RunStatus.COMPLETE
    _whole(sqlite_db, first.run_id)
