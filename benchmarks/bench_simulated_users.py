"""Simulated users end to end against the mock server: wall time, CPU per call, memory.

    python benchmarks/bench_simulated_users.py --sessions 1000 --concurrency 50

Runs red-teaming sessions played by the LLM engine through the same ``execute_plan`` as
``corix run``, persisted to a fresh SQLite file. The model playing the user and the
application under test (an OpenAI-compatible endpoint) are both the mock server (100 ms
latency, another process). Each turn is one simulator call and one application call; after
the dialogue the simulated tester answers the questionnaire in character, one more
simulator call. The mock never writes a stop token and its replies never release the
packet's facts, so every session runs to the turn limit.

Reports the wall time against two latency-bound ideals: the turns alone (sessions × turns
× 2 calls × latency / concurrency: 20 s for 1,000 five-turn sessions) and the turns plus
the questionnaire call; the CPU milliseconds per model call, corix's and the mock
server's (which shares the machine's cores); and the peak memory.
``--scale`` first runs 10× fewer sessions and then 10× more, to show that memory stays flat
as the run grows (peak RSS of the process so far: the larger runs must not raise it much).

Both endpoints are declared to sustain ``--concurrency`` requests (fixed concurrency), as a
team does for an endpoint whose capacity it knows. ``--adaptive`` leaves corix's default
instead: each endpoint starts at two requests in flight and doubles each round while
latency holds, so at 1 s latency reaching 1,000 costs about nine rounds (seconds) of ramp.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
from pathlib import Path

from sqlalchemy import func, select

from _bench_support import (
    mock_server_with_pid,
    mock_stats,
    process_cpu_s,
    run_sizes,
    slot_occupancy,
)
from corix.domain import ApplicationEntry, EndReason, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.llm import EndpointConfig
from corix.storage import Database, run_totals
from corix.storage.orm import QuestionnaireResponseRow, SessionRow


async def measure(
    base_url: str, sessions: int, turns: int, concurrency: int, adaptive: bool, workdir: Path
) -> dict[str, float]:
    simulated = LevelSettings(
        sessions=sessions,
        max_turns=turns,
        engine="llm",
        simulator=EndpointConfig(
            base_url=base_url,
            model="corix-mock",
            max_concurrency=concurrency,
            adaptive_concurrency=adaptive,
        ),
    )
    plan = Plan(
        name="bench-simulated",
        applications=[
            ApplicationEntry(
                name="mock-app",
                spec=f"openai:{base_url}?model=corix-mock&max_concurrency={concurrency}&max_retries=0"
                + ("" if adaptive else "&adaptive_concurrency=false"),
            )
        ],
        scenarios=["tv_spoilers"],
        levels={Level.RED_TEAMING: simulated},
        concurrency=concurrency,
    )
    db = Database(f"sqlite:///{workdir / 'bench.db'}")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = await execute_plan(plan, db)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    counts = run_totals(db, result.run_id)
    with db.session() as s:
        at_limit = s.scalar(
            select(func.count())
            .select_from(SessionRow)
            .where(SessionRow.end_reason == EndReason.TURN_LIMIT.value)
        )
        answered = s.scalar(select(func.count()).select_from(QuestionnaireResponseRow))
    db.dispose()
    assert counts.sessions == at_limit == sessions, (counts, at_limit)
    assert counts.turns == sessions * turns and counts.error_turns == 0, counts
    assert answered == sessions * 5, answered  # every questionnaire answered in character
    calls = sessions * (2 * turns + 1)
    return {"wall_s": wall, "cpu_ms_per_call": cpu * 1000 / calls}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--scale", action="store_true", help="also run at sessions ÷10 and ×10")
    parser.add_argument(
        "--adaptive", action="store_true", help="endpoints adapt from 2 in flight (the default)"
    )
    args = parser.parse_args()
    sizes = run_sizes(args.sessions, args.scale)
    latency_s = args.latency_ms / 1000
    with mock_server_with_pid(args.latency_ms) as (base_url, server_pid):
        for sessions in sizes:
            server_cpu0 = process_cpu_s(server_pid)
            before = mock_stats(base_url)
            with tempfile.TemporaryDirectory() as tmp:
                figures = asyncio.run(
                    measure(
                        base_url, sessions, args.turns, args.concurrency, args.adaptive, Path(tmp)
                    )
                )
            # A dialogue is its turns (two calls each) and the questionnaire call.
            drain_s = (args.turns * 2 + 1) * latency_s
            slots = slot_occupancy(
                before, mock_stats(base_url), args.concurrency, ramp_s=latency_s, drain_s=drain_s
            )
            calls = sessions * (args.turns * 2 + 1)
            server_ms = (process_cpu_s(server_pid) - server_cpu0) * 1000 / calls
            turns_ideal = sessions * args.turns * 2 * latency_s / args.concurrency
            full_ideal = sessions * (args.turns * 2 + 1) * latency_s / args.concurrency
            print(
                f"sessions={sessions} turns={args.turns} concurrency={args.concurrency} "
                f"wall={figures['wall_s']:.2f}s "
                f"ideal(turns)={turns_ideal:.2f}s ratio={figures['wall_s'] / turns_ideal:.2f} "
                f"ideal(+questionnaire)={full_ideal:.2f}s "
                f"ratio={figures['wall_s'] / full_ideal:.2f} "
                f"cpu/call={figures['cpu_ms_per_call']:.2f}ms "
                f"mock-server-cpu/call={server_ms:.2f}ms "
                f"peak-rss={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}MiB "
                f"{slots.describe()}"
            )


if __name__ == "__main__":
    main()
