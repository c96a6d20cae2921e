"""Model testing end to end against the mock server: wall time, CPU per call, memory.

    python benchmarks/bench_model_testing.py --sessions 2000 --concurrency 50

Runs single-turn model-testing sessions of an OpenAI-compatible application served by
the mock server (100 ms latency, another process), persisted to a fresh SQLite file,
through the same ``execute_plan`` as ``corix run``. Reports the wall time against the
latency-bound ideal (sessions × latency / concurrency), the CPU milliseconds per model
call, and the peak memory. ``--scale`` first runs 10× fewer sessions and then 10× more,
to show that memory stays flat as the run grows (peak RSS of the process so far: the
larger runs must not raise it much).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from _bench_support import mock_server_process, run_sizes
from corix.domain import Level
from corix.execution import execute_plan
from corix.execution.plan import ApplicationEntry, LevelSettings, Plan
from corix.scenarios import builtin_pack_dir
from corix.storage import Database, run_totals


def single_turn_pack(directory: Path, sessions: int) -> Path:
    """A copy of the Pathfinder pack whose model tests are ``sessions`` one-turn prompts."""
    pack_dir = directory / "bench_pack"
    shutil.copytree(builtin_pack_dir() / "pathfinder", pack_dir)
    manifest_path = pack_dir / "pack.yaml"
    manifest = yaml.safe_load(manifest_path.read_text(encoding="utf-8"))
    manifest["name"] = "bench_pathfinder"
    manifest["model_testing"] = {
        "scripts": [
            {
                "id": "ask",
                "probe": "capability",
                "description": "One question per session.",
                "turns": ["Question {{ n }}: how do I get from Brackenford to Millhaven?"],
                "parameters": {"grid": {"n": list(range(sessions))}},
            }
        ]
    }
    manifest_path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return pack_dir


async def measure(
    base_url: str, sessions: int, concurrency: int, workdir: Path
) -> dict[str, float]:
    pack = single_turn_pack(workdir, sessions)
    plan = Plan(
        name="bench",
        applications=[
            ApplicationEntry(
                name="mock-app",
                spec=f"openai:{base_url}?model=corix-mock&max_concurrency={concurrency}&max_retries=0",
            )
        ],
        scenarios=[str(pack)],
        levels={Level.MODEL_TESTING: LevelSettings()},
        concurrency=concurrency,
    )
    db = Database(f"sqlite:///{workdir / 'bench.db'}")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = await execute_plan(plan, db)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    counts = run_totals(db, result.run_id)
    db.dispose()
    assert counts.sessions == sessions and counts.error_turns == 0, counts
    return {"wall_s": wall, "cpu_ms_per_call": cpu * 1000 / sessions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--scale", action="store_true", help="also run at sessions ÷10 and ×10")
    args = parser.parse_args()
    sizes = run_sizes(args.sessions, args.scale)
    with mock_server_process(args.latency_ms) as base_url:
        for sessions in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                figures = asyncio.run(measure(base_url, sessions, args.concurrency, Path(tmp)))
            ideal = sessions * args.latency_ms / 1000 / args.concurrency
            print(
                f"sessions={sessions} concurrency={args.concurrency} "
                f"wall={figures['wall_s']:.2f}s ideal={ideal:.2f}s "
                f"ratio={figures['wall_s'] / ideal:.2f} "
                f"cpu/call={figures['cpu_ms_per_call']:.2f}ms "
                f"peak-rss={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}MiB"
            )


if __name__ == "__main__":
    main()
