"""Shared pieces of the benchmarks: the mock server process, its endpoint, run sizes, a
scratch database, a free port, a web series of the demo application.

The server gets its own process so that its CPU is not counted as the client's; the two
still share the machine's cores.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text

from corix.domain import Level
from corix.llm import EndpointConfig
from corix.web.services import EvaluationSettings
from corix.web.state import WebState

PG_ADMIN_URL = os.environ.get(
    "CORIX_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@contextmanager
def scratch_database_url(backend: str, label: str) -> Iterator[str]:
    """A fresh database's URL: a SQLite file in a temporary folder, or a PostgreSQL
    database on ``$CORIX_TEST_PG_URL``'s server, dropped afterwards."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{Path(folder) / f'{label}.db'}"
        return
    name = f"corix_{label}_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield f"{PG_ADMIN_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def mock_server_process(latency_ms: float) -> Iterator[str]:
    """Start ``python -m corix.llm.mock_server`` on a free port and yield its base URL."""
    with mock_server_with_pid(latency_ms) as (base_url, _pid):
        yield base_url


@contextmanager
def mock_server_with_pid(latency_ms: float) -> Iterator[tuple[str, int]]:
    """The mock server process: its base URL and process id (to read its CPU time)."""
    command = [
        sys.executable, "-m", "corix.llm.mock_server", "--port", "0",
        "--latency-ms", str(latency_ms),
    ]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            yield server.stdout.readline().rsplit(" ", 1)[-1].strip(), server.pid
        finally:
            server.terminate()
            server.wait(timeout=10)


def process_cpu_s(pid: int) -> float:
    """User plus system CPU seconds of a live process on Linux (from /proc)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mock_endpoint(base_url: str, concurrency: int) -> EndpointConfig:
    """The mock server as an endpoint: no retries, so a failure shows in the figures, and a
    fixed concurrency, so every figure is measured at the load it names."""
    return EndpointConfig(
        name="bench",
        base_url=base_url,
        model="corix-mock",
        max_concurrency=concurrency,
        adaptive_concurrency=False,
        timeout_s=30.0,
        max_retries=0,
    )


def run_sizes(size: int, scale: bool) -> list[int]:
    """``size``, or with ``scale`` ten times fewer and ten times more, to show growth."""
    return [size // 10, size, size * 10] if scale else [size]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_listening(port: int, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    """Return once ``process`` accepts connections on ``port``; fail if it dies or is late."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the server did not start") from None
            time.sleep(0.05)


def demo_field_series(state: WebState, title: str, *, turns: int) -> str:
    """A field-testing series on TV Spoilers with the demo application; its id."""
    evaluation = state.evaluations.create(
        f"{title} test",
        description="",
        scenarios=["tv_spoilers"],
        levels=[Level.FIELD_TESTING],
        settings=EvaluationSettings(max_turns=turns),
    )
    state.evaluations.register_application(
        evaluation, name=f"{title} demo", spec="demo:guarded", credentials_json=""
    )
    return evaluation
