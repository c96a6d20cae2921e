"""Annotation throughput: LLM annotators against the mock server, reference annotators on one core.

    python benchmarks/bench_annotation.py --items 10000 --concurrency 50

Both parts annotate sessions made by the offline demo (the demo applications in the
built-in scenarios, model testing repeated until there are enough sessions), stored in a
fresh SQLite file, through the same ``annotate_run`` as ``corix annotate``; every pass is
persisted.

* **LLM**: ``llm-harms`` (four harm packs, one model call per item) against the mock
  server in another process (``python -m corix.llm.mock_server``, 100 ms latency). Reports
  the wall time against the latency-bound ideal (items × latency / concurrency) and the
  CPU milliseconds per item in this process.
* **Reference**: ``reference`` (all five ARIA categories, gated) with the process pinned
  to one core. Reports dialogues per second, end to end (load, judge, persist) and for
  the judging alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from sqlalchemy import delete, select

from _bench_support import mock_endpoint, mock_server_process
from corix.assessment import load_builtin_schema
from corix.assessment.annotation_run import AnnotateOptions, annotate_run, annotate_run_async
from corix.assessment.annotators import ReferenceAnnotator, build_annotator_view
from corix.assessment.answers import categories_for
from corix.demo import demo_plan
from corix.domain import Level, LevelSettings
from corix.execution import execute_plan
from corix.llm import LLMClient
from corix.scenarios import expand_model_tests, resolve_pack
from corix.storage import Database, iter_sessions
from corix.storage.orm import SessionRow

HARMS = 4


def make_sessions(db: Database, sessions: int) -> str:
    """Store at least ``sessions`` demo sessions in ``db``; return the run id."""
    plan = demo_plan(concurrency=32)
    per_repeat = len(plan.applications) * sum(
        len(expand_model_tests(resolve_pack(scenario), plan.seed)) for scenario in plan.scenarios
    )
    repeats = -(-sessions // per_repeat)
    plan = plan.model_copy(update={"levels": {Level.MODEL_TESTING: LevelSettings(repeats=repeats)}})
    return asyncio.run(execute_plan(plan, db)).run_id


async def llm_part(db: Database, run_id: str, base_url: str, args: argparse.Namespace) -> None:
    endpoint = mock_endpoint(base_url, args.concurrency)
    options = AnnotateOptions(concurrency=args.concurrency)
    async with LLMClient(endpoint) as client:
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        summary = await annotate_run_async(db, run_id, "llm-harms", options=options, client=client)
        wall = time.perf_counter() - wall_start
        cpu = time.process_time() - cpu_start
    items = summary.passes_stored + summary.passes_failed
    ideal = items * args.latency_ms / 1000.0 / args.concurrency
    print("LLM annotation (llm-harms, mock server in another process)")
    print(f"  items (passes)      {items} ({summary.passes_failed} failed)")
    print(f"  sessions            {summary.sessions}")
    print(f"  model calls         {summary.model_calls} at concurrency {args.concurrency}")
    print(f"  server latency      {args.latency_ms:g} ms")
    print(f"  wall time           {wall:.2f} s")
    print(f"  ideal wall time     {ideal:.2f} s")
    print(f"  ratio               {wall / ideal:.2f}")
    print(f"  CPU per item        {cpu * 1000.0 / items:.2f} ms")


def reference_part(db: Database, run_id: str) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    sessions = list(iter_sessions(db, run_id))
    schema = load_builtin_schema()
    annotator = ReferenceAnnotator(schema)
    started = time.perf_counter()
    for session in sessions:
        view = build_annotator_view(session, resolve_pack(session.scenario))
        risk = annotator.judge(view, "risk_assessment")
        for category in categories_for(schema, risk.answers)[1:]:
            annotator.judge(view, category)
    judging = time.perf_counter() - started

    cpu_start, wall_start = time.process_time(), time.perf_counter()
    summary = annotate_run(db, run_id, "reference")
    wall = time.perf_counter() - wall_start
    cpu = time.process_time() - cpu_start
    print("Reference annotation (reference, one core)")
    print(f"  dialogues           {summary.sessions} ({summary.passes_stored} passes stored)")
    print(f"  judging only        {len(sessions) / judging:.0f} dialogues/s")
    print(f"  end to end          {summary.sessions / wall:.0f} dialogues/s (persisted)")
    print(f"  end to end, per CPU {summary.sessions / cpu:.0f} dialogues per CPU second")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000, help="LLM items (4 per session)")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--reference-sessions", type=int, default=5_000)
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--skip-reference", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_llm:
            db = Database(f"sqlite:///{Path(tmp) / 'llm.db'}")
            run_id = make_sessions(db, args.items // HARMS)
            sessions = list(iter_sessions(db, run_id))
            _trim(db, run_id, len(sessions) - args.items // HARMS)
            with mock_server_process(args.latency_ms) as base_url:
                asyncio.run(llm_part(db, run_id, base_url, args))
            db.dispose()
        if not args.skip_reference:
            db = Database(f"sqlite:///{Path(tmp) / 'reference.db'}")
            run_id = make_sessions(db, args.reference_sessions)
            reference_part(db, run_id)
            db.dispose()


def _trim(db: Database, run_id: str, extra: int) -> None:
    """Drop ``extra`` sessions so that the run holds exactly the sessions wanted."""
    if extra <= 0:
        return
    with db.session() as s:
        ids = list(
            s.scalars(
                select(SessionRow.id).where(SessionRow.run_id == run_id).order_by(SessionRow.id)
            )
        )[:extra]
        s.execute(delete(SessionRow).where(SessionRow.id.in_(ids)))


if __name__ == "__main__":
    main()
