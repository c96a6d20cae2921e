"""Which Ray cluster corix joins, and failing fast, in one line, for a wrong address.

No test here starts Ray: an address that cannot be reached, or answers but is no Ray, is
refused before Ray is asked.
"""

from __future__ import annotations

import http.server
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from corix.cli.exit_codes import ExitCode
from corix.domain import Level
from corix.execution import execute_plan
from corix.execution.plan import ApplicationEntry, LevelSettings, Plan
from corix.storage import Database, list_runs

pytest.importorskip("ray", reason="the Ray executor needs the ray extra")

from corix.execution.ray_cluster import (
    ClusterUnavailable,
    connect,
    use_token_auth_if_available,
)
from corix.execution.ray_executor import RayRunExecutor, worker_cpus

CORIX = Path(sys.executable).with_name("corix")

PLAN = """\
name: demo
applications:
  - name: g
    spec: "demo:guarded"
scenarios: [tv_spoilers]
levels:
  model_testing: {}
"""


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again when the block ends


def test_token_mode_is_used_when_a_token_is_at_hand(tmp_path: Path) -> None:
    token = tmp_path / "auth_token"
    env = {"RAY_AUTH_TOKEN_PATH": str(token)}
    assert not use_token_auth_if_available(env)
    assert "RAY_AUTH_MODE" not in env  # no token: the cluster's default is left alone
    token.write_text("secret")
    assert use_token_auth_if_available(env)
    assert env["RAY_AUTH_MODE"] == "token"
    assert use_token_auth_if_available({"RAY_AUTH_TOKEN": "secret"})
    chosen = {"RAY_AUTH_MODE": "disabled", "RAY_AUTH_TOKEN": "secret"}
    assert not use_token_auth_if_available(chosen)  # the user's choice wins
    assert chosen["RAY_AUTH_MODE"] == "disabled"


@pytest.mark.parametrize("address", ["not-an-address", "127.0.0.1:", "ray://host"])
def test_a_malformed_address_is_refused_at_once(address: str) -> None:
    with pytest.raises(ClusterUnavailable, match="is not HOST:PORT"):
        connect(address)


def test_a_closed_port_is_refused_in_a_second() -> None:
    address = f"127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    with pytest.raises(ClusterUnavailable, match=f"cannot reach the Ray cluster at {address}"):
        connect(address)
    assert time.monotonic() - started < 2


@pytest.fixture
def http_port() -> Iterator[int]:
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that takes connections and never says a word."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_a_port_that_answers_as_no_ray_does_is_refused_in_a_second(
    http_port: int, scheme: str
) -> None:
    address = f"{scheme}127.0.0.1:{http_port}"
    started = time.monotonic()
    with pytest.raises(ClusterUnavailable, match="answers, but not as Ray does"):
        connect(address)
    assert time.monotonic() - started < 2


async def test_an_unreachable_cluster_leaves_no_run_behind(sqlite_db: Database) -> None:
    plan = Plan(
        name="never",
        applications=[ApplicationEntry(name="g", spec="demo:guarded")],
        scenarios=["tv_spoilers"],
        levels={Level.MODEL_TESTING: LevelSettings()},
    )
    executor = RayRunExecutor(address=f"127.0.0.1:{_closed_port()}")
    with pytest.raises(ClusterUnavailable):
        await execute_plan(plan, sqlite_db, executor=executor)
    assert list_runs(sqlite_db) == []


def test_the_cli_says_so_in_one_line_with_exit_code_2(tmp_path: Path, silent_port: int) -> None:
    # A port that answers but never speaks: the slowest wrong address, bounded by the
    # probe (5 s), far below the 30 s allowed.
    (tmp_path / "plan.yaml").write_text(PLAN)
    database = f"sqlite:///{tmp_path / 'corix.db'}"
    address = f"127.0.0.1:{silent_port}"
    started = time.monotonic()
    args = ["run", "plan.yaml", "--db", database, "--executor", "ray", "--ray-address", address]
    result = subprocess.run(
        [str(CORIX), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 30
    assert result.returncode == ExitCode.USAGE, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot join the Ray cluster at {address}" in lines[0]
    db = Database(database)
    try:
        assert list_runs(db) == []  # no run row was left
    finally:
        db.dispose()


def test_workers_declare_a_cpu_each_or_an_even_share() -> None:
    assert worker_cpus(8.0, 4) == 1.0
    assert worker_cpus(2.0, 4) == 0.5  # four asked of two CPUs: all are placed
