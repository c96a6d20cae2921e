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
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

from corix.cli.exit_codes import ExitCode
from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.storage import Database, list_runs

pytest.importorskip("ray", reason="the Ray executor needs the ray extra")

import grpc
import ray
import typer

from corix.cli.run_cmd import executor_settings
from corix.execution.ray_access import ClusterUnavailable, prepare_cluster
from corix.execution.ray_cluster import connect
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


GCS = ("ray.rpc.NodeInfoGcsService", "GetClusterId")
CLIENT = ("ray.rpc.RayletDriver", "ClusterInfo")
TOKEN = "0123456789abcdef0123456789abcdef"


@contextmanager
def fake_ray_port(service: tuple[str, str], token: str | None) -> Iterator[int]:
    """A port answering one of Ray's gRPC calls as Ray 2.60 does: with ``token``, a call
    without ``authorization: Bearer <token>`` is refused ``UNAUTHENTICATED``; any other
    service is ``UNIMPLEMENTED`` (measured against `ray start --head`)."""

    def answer(_request: bytes, context: grpc.ServicerContext) -> bytes:
        sent = dict(context.invocation_metadata()).get("authorization")
        if token is not None and sent != f"Bearer {token}":
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "InvalidAuthToken")
        return b""

    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    handler = grpc.unary_unary_rpc_method_handler(answer)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service[0], {service[1]: handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield port
    finally:
        server.stop(None)


@pytest.fixture
def stale_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A token file left in ~/.ray by a local cluster of another day."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("left-by-a-local-ray")
    return "left-by-a-local-ray"


@pytest.mark.parametrize(("service", "scheme"), [(GCS, ""), (CLIENT, "ray://")])
def test_a_cluster_without_auth_is_joined_without_a_token_whatever_file_is_left(
    stale_token: str, service: tuple[str, str], scheme: str
) -> None:
    env: dict[str, str] = {}
    with fake_ray_port(service, token=None) as port:
        prepare_cluster(f"{scheme}127.0.0.1:{port}", env)
    assert env == {"RAY_AUTH_MODE": "disabled"}  # set before Ray is imported


@pytest.mark.parametrize(("service", "scheme"), [(GCS, ""), (CLIENT, "ray://")])
def test_a_cluster_with_auth_is_joined_in_token_mode_with_a_token_it_accepts(
    tmp_path: Path, stale_token: str, service: tuple[str, str], scheme: str
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    with fake_ray_port(service, token=TOKEN) as port:
        address = f"{scheme}127.0.0.1:{port}"
        for given in ({"RAY_AUTH_TOKEN": TOKEN}, {"RAY_AUTH_TOKEN_PATH": str(token_file)}):
            env = dict(given)
            prepare_cluster(address, env)
            assert env["RAY_AUTH_MODE"] == "token"
        with pytest.raises(ClusterUnavailable, match=r"refuses the token in .*auth_token"):
            prepare_cluster(address, {})  # the stale file is tried, and named
        with pytest.raises(ClusterUnavailable, match="refuses the token in RAY_AUTH_TOKEN"):
            prepare_cluster(address, {"RAY_AUTH_TOKEN": "wrong"})
        chosen = {"RAY_AUTH_MODE": "disabled"}
        prepare_cluster(address, chosen)  # the user's choice wins, unchecked
        assert chosen == {"RAY_AUTH_MODE": "disabled"}


def test_a_cluster_with_auth_and_no_token_here_says_where_to_put_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    asks = pytest.raises(ClusterUnavailable, match="asks for a token: set RAY_AUTH_TOKEN")
    with fake_ray_port(GCS, token=TOKEN) as port, asks:
        prepare_cluster(f"127.0.0.1:{port}", {})


def test_the_wrong_kind_of_ray_port_is_named_at_once() -> None:
    started = time.monotonic()
    gcs_port = pytest.raises(ClusterUnavailable, match="is a Ray head's GCS port, not Ray Client")
    with fake_ray_port(GCS, token=None) as port, gcs_port:
        prepare_cluster(f"ray://127.0.0.1:{port}", {})
    with fake_ray_port(CLIENT, token=None) as port, pytest.raises(ClusterUnavailable) as refused:
        prepare_cluster(f"127.0.0.1:{port}", {})
    assert (
        str(refused.value) == f"127.0.0.1:{port} is Ray Client's port: use ray://127.0.0.1:{port}"
    )
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("address", ["local", "auto"])
def test_every_address_the_cli_suggests_is_accepted(
    address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(typer.Exit):  # the hint the CLI gives for a wrong address
        executor_settings("ray", "not-an-address", None)
    assert executor_settings("ray", address, None).ray_address == address
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", "/nonexistent")  # no head on this machine to probe
    prepare_cluster(address, {})
    started: list[object] = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **options: started.append(options["address"]))
    assert connect(address)
    assert started == [address]


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
