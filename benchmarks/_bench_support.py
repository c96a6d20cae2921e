"""Shared pieces of the benchmarks: the mock server process, its endpoint, run sizes, a
scratch database, a free port, a web series of the demo application, and slot occupancy
(requests in flight over time, as the mock server saw them).

The server gets its own process so that its CPU is not counted as the client's; the two
still share the machine's cores.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import create_engine, text

from corix.domain import Level
from corix.llm import EndpointConfig
from corix.llm.mock_server import IN_FLIGHT_BUCKET_S

if TYPE_CHECKING:
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


def add_run_shape(parser: argparse.ArgumentParser) -> None:
    """A model-testing run's shape: ``--sessions`` of ``--turns`` scripted prompts each,
    ``--concurrency`` at once, ``--latency-ms`` per call."""
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency-ms", type=float, default=100.0)


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
    from corix.web.services import EvaluationSettings  # only web benchmarks load the web

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


def mock_stats(base_url: str) -> dict[str, object]:
    """The mock server's ``/mock/stats`` (requests, in flight over time, faults, …)."""
    with urllib.request.urlopen(f"{base_url.removesuffix('/v1')}/mock/stats") as response:
        stats: dict[str, object] = json.load(response)
    return stats


@dataclass(frozen=True)
class SlotOccupancy:
    """Requests in flight at the mock server during one run, against the bound the run
    was given: a slot left waiting shows here as a number, not only as a longer wall.

    The steady part runs from one latency after the first request (every slot had its
    first reply) to the drain (the last dialogues finishing, when none is left to start).
    Its mean counts every gap; its median over tenths of a second is the level the run
    holds, which a machine short of CPU dents between bursts of replies but a run that
    keeps slots idle (a bound climbed to, a pool or a writer that makes calls wait) lowers.
    """

    concurrency: int
    steady: float
    """Mean requests in flight over the steady part."""
    steady_median: float
    """Median of the steady part's tenths of a second."""
    overall: float
    """Mean requests in flight from the first request to the last reply."""

    @property
    def fraction(self) -> float:
        """``steady`` as a share of the bound: 1.0 when no slot ever waits for work."""
        return self.steady / self.concurrency

    @property
    def median_fraction(self) -> float:
        return self.steady_median / self.concurrency

    def describe(self) -> str:
        return (
            f"in flight in the steady part: mean {self.steady:.0f} of {self.concurrency} "
            f"({self.fraction:.1%}), median {self.median_fraction:.1%}; "
            f"{self.overall:.0f} counting start and drain"
        )


def slot_occupancy(
    before: Mapping[str, object],
    after: Mapping[str, object],
    concurrency: int,
    *,
    ramp_s: float,
    drain_s: float,
) -> SlotOccupancy:
    """Occupancy of the run between two ``/mock/stats`` readings (see :class:`SlotOccupancy`).

    ``ramp_s`` is left out at the start (one latency), ``drain_s`` at the end (a whole
    dialogue: its turns times the latency). The buckets at the two edges are left out too,
    being partly outside the run."""
    run = _series_between(before, after)
    if not run:
        raise ValueError("the mock server saw no request in this run")
    first, last = min(run), max(run)
    start = first + 1 + round(ramp_s / IN_FLIGHT_BUCKET_S)
    end = last - round(drain_s / IN_FLIGHT_BUCKET_S)
    whole = [run.get(bucket, 0.0) for bucket in range(first, last + 1)]
    steady = [run.get(bucket, 0.0) for bucket in range(start, end)] or whole
    return SlotOccupancy(
        concurrency,
        steady=statistics.fmean(steady),
        steady_median=statistics.median(steady),
        overall=statistics.fmean(whole),
    )


def _series_between(before: Mapping[str, object], after: Mapping[str, object]) -> dict[int, float]:
    old = _series(before)
    return {
        bucket: load - old.get(bucket, 0.0)
        for bucket, load in _series(after).items()
        if load > old.get(bucket, 0.0)
    }


def _series(stats: Mapping[str, object]) -> dict[int, float]:
    series = stats["in_flight_series"]
    assert isinstance(series, dict)
    return {int(bucket): float(load) for bucket, load in series.items()}
