"""Throughput at zero latency (CPU-bound): the local executor against Ray with 1 and 2 workers.

    python benchmarks/bench_ray_throughput.py --sessions 1000 --turns 3 --concurrency 64

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
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import ray

from _bench_support import mock_server_with_pid, process_cpu_s
from corix.domain import Level
from corix.execution import execute_plan
from corix.execution.executors import LocalRunExecutor, RunExecutor
from corix.execution.plan import ApplicationEntry, LevelSettings, Plan
from corix.execution.ray_cluster import connect
from corix.execution.ray_executor import RayRunExecutor
from corix.llm import EndpointConfig
from corix.storage import Database


def bench_plan(base_url: str, sessions: int, turns: int, concurrency: int) -> Plan:
    simulated = LevelSettings(
        sessions=sessions,
        max_turns=turns,
        engine="llm",
        simulator=EndpointConfig(
            base_url=base_url, model="corix-mock", max_concurrency=concurrency
        ),
    )
    return Plan(
        name="bench-ray",
        applications=[
            ApplicationEntry(
                name="mock-app",
                spec=f"openai:{base_url}?model=corix-mock&max_concurrency={concurrency}&max_retries=0",
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
    name: str, executor: RunExecutor, plan: Plan, workdir: Path, server_pid: int
) -> dict[str, float]:
    db = Database(f"sqlite:///{workdir / f'{name}.db'}")
    system_before = cpu_of(ray_system_pids())
    server0, cpu0, wall0 = process_cpu_s(server_pid), time.process_time(), time.perf_counter()
    result = asyncio.run(execute_plan(plan, db, executor=executor))
    wall = time.perf_counter() - wall0
    driver_cpu = time.process_time() - cpu0
    server_cpu = process_cpu_s(server_pid) - server0
    system_after = cpu_of(list(system_before))
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
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    with mock_server_with_pid(latency_ms=0.0) as (base_url, server_pid):
        plan = bench_plan(base_url, args.sessions, args.turns, args.concurrency)
        connect(None, num_cpus=2)  # a local Ray of corix's own, whatever RAY_ADDRESS says
        try:
            runs = {"local": LocalRunExecutor()}
            runs.update({f"ray x{n}": RayRunExecutor(workers=n) for n in (1, 2)})
            with tempfile.TemporaryDirectory() as tmp:
                for name, executor in runs.items():
                    f = run_once(name, executor, plan, Path(tmp), server_pid)
                    print(
                        f"{name:8} calls={f['calls']} wall={f['wall_s']:.2f}s "
                        f"throughput={f['calls_per_s']:.0f} calls/s "
                        f"corix cpu/call={f['corix_cpu_ms_per_call']:.2f}ms "
                        f"(driver {f['driver_cpu_s']:.1f}s + workers {f['workers_cpu_s']:.1f}s) "
                        f"ray {f['ray_cpu_s']:.1f}s mock server {f['server_cpu_s']:.1f}s",
                        flush=True,
                    )
        finally:
            ray.shutdown()


if __name__ == "__main__":
    main()
