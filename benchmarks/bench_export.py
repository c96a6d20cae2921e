"""Benchmark: exporting a large run as tables stays flat in memory.

    python benchmarks/bench_export.py --sessions 100000 --scale

Writes a synthetic run to a fresh SQLite file (each session three turns, two questionnaire
answers and, with ``--passes``, one annotation pass of two answers), then exports it in
every format (``corix export --format csv|parquet|hf|jsonl|corix``; ``--formats`` picks
some)
in a child process each, and prints wall time and the child's peak RSS. ``--scale``
repeats this with ten times fewer sessions and prints each format's ratio of the two
peaks: a streamed export's peak barely moves.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert

from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.storage import Database, create_run, ensure_application, set_run_status
from corix.storage.orm import (
    AnnotationAnswerRow,
    AnnotationPassRow,
    QuestionnaireResponseRow,
    SessionRow,
    TurnRow,
)

_CHUNK = 5_000
_FORMATS = ("csv", "parquet", "hf", "jsonl", "corix")
_CHILD = """
import resource, sys, time
from typer.testing import CliRunner
from corix.cli.main import app
started = time.perf_counter()
result = CliRunner().invoke(app, sys.argv[1:])
assert result.exit_code == 0, repr(result.exception) + result.output
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{time.perf_counter() - started:.1f} {peak:.0f}")
"""


def write_run(db: Database, sessions: int, passes: bool) -> str:
    app_id = ensure_application(db, "bench-app", "demo:guarded")
    plan = Plan(
        name="bench",
        applications=[ApplicationEntry(name="app", spec="demo:guarded")],
        scenarios=["tv_spoilers"],
        levels={Level.MODEL_TESTING: LevelSettings()},
    )
    create_run(db, "run-bench", name="bench", plan=plan, seed=0)
    set_run_status(db, "run-bench", "complete")
    with db.engine.begin() as connection:
        for start in range(0, sessions, _CHUNK):
            ids = [f"s{n:08d}" for n in range(start, min(start + _CHUNK, sessions))]
            connection.execute(
                insert(SessionRow),
                [
                    {
                        "id": sid, "run_id": "run-bench", "work_key": sid,
                        "application_id": app_id, "scenario": "tv_spoilers",
                        "level": "field_testing", "source": "simulated", "status": "complete",
                        "end_reason": "script_done",
                        "provenance": {"application": "bench-app", "scenario": "tv_spoilers"},
                    }
                    for sid in ids
                ],
            )  # fmt: skip
            connection.execute(
                insert(TurnRow),
                [
                    {
                        "session_id": sid, "idx": turn,
                        "user_text": f"Question {turn} about episode {turn + 4}, please?",
                        "response_text": "I'd rather not spoil it, but the finale airs soon. "
                        * 3,
                        "meta": {},
                    }
                    for sid in ids
                    for turn in range(3)
                ],
            )  # fmt: skip
            connection.execute(
                insert(QuestionnaireResponseRow),
                [
                    {
                        "session_id": sid, "respondent": "simulated:bench", "simulated": True,
                        "item_id": item, "value_num": 4.0, "provenance": {},
                    }
                    for sid in ids
                    for item in ("ft_helpful", "ft_trust")
                ],
            )  # fmt: skip
            if passes:
                _write_passes(connection, ids)
    return "run-bench"


def _write_passes(connection: object, ids: list[str]) -> None:
    execute = connection.execute  # type: ignore[attr-defined]
    rows = execute(
        insert(AnnotationPassRow).returning(AnnotationPassRow.id),
        [
            {
                "session_id": sid, "category": "risk_assessment", "annotator": "reference",
                "annotator_kind": "reference", "status": "ok",
                "provenance": {"guideline_version": "bench-1"},
            }
            for sid in ids
        ],
    )  # fmt: skip
    pass_ids = [row[0] for row in rows]
    execute(
        insert(AnnotationAnswerRow),
        [
            {"pass_id": pid, "question_id": question, "value_text": "no"}
            for pid in pass_ids
            for question in ("ra_prohibited_released", "ra_permitted_withheld")
        ],
    )


def export(db_url: str, out: Path, fmt: str) -> tuple[float, float]:
    files = {"jsonl": out / "sessions.jsonl", "corix": out / "run.jsonl"}
    target = files.get(fmt, out / fmt)
    args = ["export", "run-bench", "--format", fmt, "--output", str(target), "--db", db_url]
    found = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True)
    if found.returncode != 0:
        raise SystemExit(f"export failed: {found.stderr.strip()[-2000:]}")
    seconds, peak = found.stdout.split()[-2:]
    return float(seconds), float(peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--scale", action="store_true", help="also a tenth of the sessions")
    parser.add_argument("--passes", action="store_true", help="one annotation pass each")
    parser.add_argument(
        "--formats", default=",".join(_FORMATS), help="comma-separated (default: all)"
    )
    args = parser.parse_args()
    formats = [fmt for fmt in args.formats.split(",") if fmt]
    unknown = sorted(set(formats) - set(_FORMATS))
    if unknown:
        parser.error(f"unknown format {unknown[0]!r}; known: {', '.join(_FORMATS)}")
    sizes = [args.sessions // 10, args.sessions] if args.scale else [args.sessions]
    peaks: dict[str, list[float]] = {fmt: [] for fmt in formats}
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            db = Database(f"sqlite:///{Path(folder) / 'corix.db'}")
            started = time.perf_counter()
            write_run(db, size, args.passes)
            print(f"{size:,} sessions stored in {time.perf_counter() - started:.1f} s")
            for fmt in formats:
                seconds, peak = export(db.url, Path(folder), fmt)
                peaks[fmt].append(peak)
                print(f"  export --format {fmt}: {seconds:.1f} s, peak RSS {peak:.0f} MiB")
            db.dispose()
    if args.scale:
        for fmt, (small, large) in peaks.items():
            print(
                f"{fmt}: peak RSS at {sizes[1]:,} / at {sizes[0]:,} sessions = {large / small:.2f}"
            )
    mine = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(this process, which wrote the data: peak RSS {mine:.0f} MiB)")


if __name__ == "__main__":
    main()
