"""Peak memory as a run grows: 1,000, 10,000 and 100,000 sessions, each in a fresh process.

    python benchmarks/bench_memory.py --sizes 1000 10000 100000 --concurrency 1000

Red-teaming sessions of the scripted simulated user against a built-in demo application
(no model: the run is bound by corix's own work), two turns each, persisted to a fresh
SQLite file through the same ``execute_plan`` as ``corix run``. Each size runs in a process
of its own, so its peak RSS is its own: work items are generated lazily and sessions are
written as they finish, so the peak must not grow with the number of sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.storage import Database


def run_one(sessions: int, concurrency: int) -> None:
    plan = Plan(
        name="bench-memory",
        applications=[ApplicationEntry(name="demo", spec="demo:guarded")],
        scenarios=["tv_spoilers"],
        levels={Level.RED_TEAMING: LevelSettings(sessions=sessions, max_turns=2)},
        concurrency=concurrency,
    )
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{Path(tmp) / 'bench.db'}")
        started = time.perf_counter()
        result = asyncio.run(execute_plan(plan, db))
        wall = time.perf_counter() - started
        db.dispose()
    assert result.stats.sessions == sessions, result.stats
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"sessions={sessions} concurrency={concurrency} wall={wall:.1f}s peak-rss={peak:.0f}MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--concurrency", type=int, default=1000)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        run_one(args.one, args.concurrency)
        return
    for size in args.sizes:
        command = [sys.executable, __file__, "--one", str(size)]
        subprocess.run([*command, "--concurrency", str(args.concurrency)], check=True)


if __name__ == "__main__":
    main()
