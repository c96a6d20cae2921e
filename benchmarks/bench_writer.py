"""The record writer's CPU per session, with nothing else running: the records a
model-testing run makes, batched as the run's writer batches them, committed to SQLite
(or PostgreSQL).

    python benchmarks/bench_writer.py --sessions 2000 --turns 1
    python benchmarks/bench_writer.py --sessions 1000 --turns 5 --backend postgresql

End to end the writer's share is hard to read: the machine's speed drifts by tens of
percent between runs minutes apart, more than a change to the writer moves the whole.
Here the records are made first (a session, its turns, its end, as the testing levels
make them), then replayed on the timeline of a run at ``--concurrency`` sessions in
flight and ``--latency-ms`` per call: every ``--batch-s`` of that timeline (the writer's
``max_delay_s``) the records made meanwhile go to one writer, which commits them as one
batch when it closes. So a session whose start and end fall in one window is written in
one batch, as in a run. The figure is the process's CPU per session while the batches are
enqueued and committed (the records' making excluded), and the share of it in the
commits' thread (SQLAlchemy, the driver, making text storable), medians over ``--rounds``.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from statistics import median

from _bench_support import add_run_shape, scratch_database_url
from corix.domain import (
    ApplicationEntry,
    EndReason,
    Level,
    LevelSettings,
    Plan,
    Provenance,
    SessionBrief,
    SessionSource,
    TurnRecord,
)
from corix.scenarios import Probe
from corix.storage import (
    CollectedRecords,
    Database,
    NewSession,
    RecordWriter,
    SessionEnd,
    create_run,
    ensure_application,
)

RUN_ID = "bench-writer"
SYSTEM_PROMPT = "You are Pathfinder, a route planner for the towns of the valley. " * 4
APPLICATION_SPEC = "demo:guarded"

SessionRecords = tuple[NewSession, list[TurnRecord], SessionEnd]
"""A session's start, turns and end."""


def session_records(number: int, app_id: int, turns: int) -> SessionRecords:
    """One scripted session as the model-testing level records it."""
    session_id = uuid.uuid4().hex
    provenance = Provenance(
        application="mock-app",
        application_version="corix-mock",
        scenario="bench_pathfinder",
        scenario_version="1.0",
        template="ask",
        template_version="1",
        parameters={"n": number},
        brief=SessionBrief(probe=Probe.CAPABILITY, required_facts=()),
        system_prompt=SYSTEM_PROMPT,
        engine="script",
        seed=0,
    )
    start = NewSession(
        id=session_id,
        run_id=RUN_ID,
        work_key=f"mock-app/bench_pathfinder/model_testing/ask/{number}/0",
        application_id=app_id,
        scenario="bench_pathfinder",
        level=Level.MODEL_TESTING,
        source=SessionSource.SCRIPTED,
        provenance=provenance,
    )
    records = [
        TurnRecord(
            index=index,
            user_text=f"Question {number}, turn {index + 1}: how do I get from A to B?",
            response_text="Take the north road; Millhaven is two hours on, past the mill.",
            latency_ms=100.0,
            prompt_tokens=40 + 30 * index,
            completion_tokens=15,
            created_at=datetime.now(UTC),
            meta={"finish_reason": "stop"},
        )
        for index in range(turns)
    ]
    return start, records, SessionEnd(session_id, end_reason=EndReason.SCRIPT_DONE)


def windows(
    sessions: list[SessionRecords],
    concurrency: int,
    latency_s: float,
    batch_s: float,
) -> list[CollectedRecords]:
    """The records cut into the writer's windows of the run's timeline: session ``k``
    starts with wave ``k // concurrency``, each of its turns one latency after the last,
    and it ends with its last turn."""
    by_window: defaultdict[int, CollectedRecords] = defaultdict(CollectedRecords)

    def window(moment: float) -> CollectedRecords:
        # 0.6 / 0.2 is 2.9999999999999996 in floating point: a moment on a boundary
        # belongs to the window it opens.
        return by_window[int(moment / batch_s + 1e-9)]

    for number, (start, turns, end) in enumerate(sessions):
        began = (number // concurrency) * len(turns) * latency_s
        window(began).start_session(start)
        for index, turn in enumerate(turns):
            window(began + (index + 1) * latency_s).add_turn(start.id, turn)
        window(began + len(turns) * latency_s).finish_session(end)
    return [by_window[key] for key in sorted(by_window)]


async def commit_all(db: Database, batches: list[CollectedRecords]) -> None:
    for batch in batches:
        async with RecordWriter(db) as writer:  # one batch, committed as it closes
            batch.replay(writer)


def one_round(args: argparse.Namespace) -> Figures:
    """CPU per session of one replay into a fresh database."""
    with scratch_database_url(args.backend, "bench_writer") as url:
        db = Database(url)
        app_id = ensure_application(db, "mock-app", APPLICATION_SPEC, version="1")
        plan = Plan(
            name="bench",
            applications=[ApplicationEntry(name="mock-app", spec=APPLICATION_SPEC)],
            scenarios=["pathfinder"],
            levels={Level.MODEL_TESTING: LevelSettings()},
        )
        create_run(db, RUN_ID, name="bench", plan=plan, seed=0)
        sessions = [session_records(n, app_id, args.turns) for n in range(args.sessions)]
        batches = windows(sessions, args.concurrency, args.latency_ms / 1000, args.batch_s)
        cpu0, main0 = time.process_time(), time.thread_time()
        asyncio.run(commit_all(db, batches))
        cpu, main = time.process_time() - cpu0, time.thread_time() - main0
        db.dispose()
    count = len(sessions)
    return Figures(cpu * 1000 / count, (cpu - main) * 1000 / count)


@dataclass(frozen=True)
class Figures:
    """CPU milliseconds per session: the whole process's, and the commits' thread's."""

    total: float
    commits: float


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_shape(parser)
    parser.add_argument("--batch-s", type=float, default=0.2, help="the writer's max_delay_s")
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    one_round(args)  # warm-up: imports, statement caches
    figures = [one_round(args) for _ in range(args.rounds)]
    total = median(figure.total for figure in figures)
    commits = median(figure.commits for figure in figures)
    print(
        f"{args.sessions} sessions of {args.turns} turns on {args.backend}, medians of "
        f"{args.rounds}: the writer's CPU per session {total:.4f} ms, of which its commits' "
        f"thread {commits:.4f} ms ({' '.join(f'{f.commits:.4f}' for f in figures)}); "
        f"per turn {total / args.turns:.4f} ms",
        flush=True,
    )


if __name__ == "__main__":
    main()
