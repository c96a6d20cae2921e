"""Benchmark: the CoRIx report of a run with a few thousand annotated sessions.

    python benchmarks/bench_report.py --sessions-per-cell 111 --bootstrap 1000

Writes a synthetic run (3 applications × 3 scenarios × 3 levels × N sessions, two
annotators, the LLM one repeated three times, questionnaires at red teaming and field
testing) to a fresh SQLite file, then times ``write_report`` with both shipped trees.
Target: about 3,000 sessions in under 15 s with 1,000 bootstrap replicates. The HTML
stays bounded because transcripts are capped per application × level × scenario.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from corix.report import write_report
from corix.storage import Database

# The synthetic run is the one the report tests use.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "report"))
from report_support import write_synthetic_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions-per-cell", type=int, default=111)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--transcripts", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Database(f"sqlite:///{Path(folder) / 'corix.db'}")
        started = time.perf_counter()
        run_id = asyncio.run(write_synthetic_run(db, sessions_per_cell=args.sessions_per_cell))
        sessions = 27 * args.sessions_per_cell
        print(f"stored {sessions:,} sessions in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        paths = write_report(
            db,
            run_id,
            Path(folder) / "report",
            bootstrap=args.bootstrap,
            transcripts_per_group=args.transcripts,
        )
        seconds = time.perf_counter() - started
        print(f"report with {args.bootstrap:,} bootstrap replicates: {seconds:.1f} s")
        for path in (paths.html, paths.markdown, paths.json):
            print(f"  {path.name}: {path.stat().st_size / 1e6:.1f} MB")
        db.dispose()


if __name__ == "__main__":
    main()
