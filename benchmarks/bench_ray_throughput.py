"""Throughput at zero latency (CPU-bound), or slots kept busy at a latency: the local
executor against Ray with 1 and 2 workers.

    python benchmarks/bench_ray_throughput.py --sessions 1000 --turns 3 --concurrency 64
    python benchmarks/bench_ray_throughput.py --sessions 300 --concurrency 32 --latency-ms 200

The same plan as ``bench_simulated_users.py`` (red-teaming sessions played by the LLM
engine; the simulated user and the application are both the mock server, in another
process, answering at once) runs three times into fresh SQLite files: on the local
executor, and on a local Ray with one and with two workers (records stream back to the
driver). With no latency the run is bound by CPU, and this machine's two cores are
shared by corix and the mock server, so the figures split the CPU seconds of each run:

* corix: the driver process, plus the Ray workers (each reports its own);
* Ray's own processes (GCS, raylet, idle workers), alive before and after the run;
* the mock server.

corix's own CPU per model call is the figure that must not grow with Ray.

With ``--latency-ms`` (each endpoint then held at ``--concurrency``, not ramped up
adaptively) the figure is how many of the plan's ``concurrency`` slots hold a request:
requests in flight at the mock server, in the steady part (mean and median over tenths of
a second) and counting start and drain (``_bench_support.slot_occupancy``, shared by every
throughput benchmark). It equals the bound when no slot waits for work.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import ray

from _bench_support import (
    SlotOccupancy,
    mock_server_with_pid,
    mock_stats,
    process_cpu_s,
    slot_occupancy,
)
from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.execution.executors import LocalRunExecutor, RunExecutor
from corix.execution.ray_cluster import connect
from corix.execution.ray_executor import RayRunExecutor
from corix.llm import EndpointConfig
from corix.storage import Database


def bench_plan(
    base_url: str, sessions: int, turns: int, concurrency: int, *, fixed: bool = False
) -> Plan:
    """The plan; ``fixed`` holds each endpoint at ``concurrency`` (no adaptive ramp), so
    that slots left empty are the executor's."""
    simulated = LevelSettings(
        sessions=sessions,
        max_turns=turns,
        engine="llm",
        simulator=EndpointConfig(
            base_url=base_url,
            model="corix-mock",
            max_concurrency=concurrency,
            adaptive_concurrency=not fixed,
        ),
    )
    options = f"model=corix-mock&max_concurrency={concurrency}&max_retries=0"
    return Plan(
        name="bench-ray",
        applications=[
            ApplicationEntry(
                name="mock-app",
                spec=f"openai:{base_url}?{options}&adaptive_concurrency={str(not fixed).lower()}",
            )
        ],
        scenarios=["tv_spoilers"],
        levels={Level.RED_TEAMING: simulated},
        concurrency=concurrency,
    )


def ray_system_pids() -> list[int]:
    """Processes of this machine's Ray session other than this one (GCS, raylet, workers)."""
    own = os.getpid()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == own:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ")
        except OSError:
            continue
        if b"ray" in command and (b"session_" in command or b"gcs_server" in command):
            pids.append(int(entry))
    return pids


def cpu_of(pids: list[int]) -> dict[int, float]:
    seconds = {}
    for pid in pids:
        try:
            seconds[pid] = process_cpu_s(pid)
        except OSError:
            continue
    return seconds


def run_once(
    name: str,
    executor: RunExecutor,
    plan: Plan,
    workdir: Path,
    server: tuple[str, int],
    window: dict[str, float],
) -> tuple[dict[str, float], SlotOccupancy]:
    base_url, server_pid = server
    db = Database(f"sqlite:///{workdir / f'{name}.db'}")
    before = mock_stats(base_url)
    system_before = cpu_of(ray_system_pids())
    server0, cpu0, wall0 = process_cpu_s(server_pid), time.process_time(), time.perf_counter()
    result = asyncio.run(execute_plan(plan, db, executor=executor))
    wall = time.perf_counter() - wall0
    driver_cpu = time.process_time() - cpu0
    server_cpu = process_cpu_s(server_pid) - server0
    system_after = cpu_of(list(system_before))
    slots = slot_occupancy(before, mock_stats(base_url), plan.concurrency, **window)
    db.dispose()
    assert result.status == "complete", result.error
    (invocation,) = result.stats.invocations
    calls = invocation.usage.model_calls
    workers_cpu = invocation.usage.worker_cpu_s
    ray_cpu = sum(system_after[p] - system_before[p] for p in system_after)
    return {
        "calls": calls,
        "wall_s": wall,
        "calls_per_s": calls / wall,
        "corix_cpu_ms_per_call": (driver_cpu + workers_cpu) * 1000 / calls,
        "driver_cpu_s": driver_cpu,
        "workers_cpu_s": workers_cpu,
        "ray_cpu_s": ray_cpu,
        "server_cpu_s": server_cpu,
    }, slots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()
    latency_s = args.latency_ms / 1000
    with mock_server_with_pid(latency_ms=args.latency_ms) as (base_url, server_pid):
        plan = bench_plan(
            base_url, args.sessions, args.turns, args.concurrency, fixed=latency_s > 0
        )
        connect(None, num_cpus=2)  # a local Ray of corix's own, whatever RAY_ADDRESS says
        try:
            runs: dict[str, RunExecutor] = {"local": LocalRunExecutor()}
            runs.update({f"ray x{n}": RayRunExecutor(workers=n) for n in (1, 2)})
            window = {"ramp_s": latency_s, "drain_s": args.turns * latency_s}
            with tempfile.TemporaryDirectory() as tmp:
                local = 0.0
                for name, executor in runs.items():
                    server = (base_url, server_pid)
                    f, occupancy = run_once(name, executor, plan, Path(tmp), server, window)
                    local = local or occupancy.steady
                    slots = (
                        f" {occupancy.describe()} ({occupancy.steady / local:.2f}x local)"
                        if latency_s
                        else ""
                    )
                    print(
                        f"{name:8} calls={f['calls']} wall={f['wall_s']:.2f}s "
                        f"throughput={f['calls_per_s']:.0f} calls/s "
                        f"corix cpu/call={f['corix_cpu_ms_per_call']:.2f}ms "
                        f"(driver {f['driver_cpu_s']:.1f}s + workers {f['workers_cpu_s']:.1f}s) "
                        f"ray {f['ray_cpu_s']:.1f}s mock server {f['server_cpu_s']:.1f}s{slots}",
                        flush=True,
                    )
        finally:
            ray.shutdown()


if __name__ == "__main__":
    main()
