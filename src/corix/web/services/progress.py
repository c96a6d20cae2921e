"""What an admin watches: sessions done, annotations per category and pass, automated runs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from corix.storage import Database
from corix.storage.orm import RunRow, SessionRow
from corix.storage.orm_web import AnnotationTaskRow, AssignmentRow
from corix.web.services.annotation_queue import TaskStatus


@dataclass(frozen=True)
class RunSummary:
    id: str
    name: str
    status: str
    sessions: int
    created_at: datetime


@dataclass(frozen=True)
class Progress:
    assignments: dict[str, Counter[str]]
    """Level → assignment status → count."""
    sessions: dict[str, int]
    """Level → complete sessions, from every run of the series."""
    passes: dict[str, dict[int, int]]
    """Category → pass number → human passes stored."""
    runs: list[RunSummary]


def evaluation_progress(db: Database, evaluation_id: str) -> Progress:
    with db.session() as s:
        assignments: dict[str, Counter[str]] = {}
        for level, status, count in s.execute(
            select(AssignmentRow.level, AssignmentRow.status, func.count())
            .where(AssignmentRow.evaluation_id == evaluation_id)
            .group_by(AssignmentRow.level, AssignmentRow.status)
        ):
            assignments.setdefault(level, Counter())[status] = count
        sessions = dict(
            s.execute(
                select(SessionRow.level, func.count())
                .join(RunRow, RunRow.id == SessionRow.run_id)
                .where(RunRow.evaluation_id == evaluation_id, SessionRow.status == "complete")
                .group_by(SessionRow.level)
            )
            .tuples()
            .all()
        )
        counts = dict(
            s.execute(
                select(SessionRow.run_id, func.count())
                .join(RunRow, RunRow.id == SessionRow.run_id)
                .where(RunRow.evaluation_id == evaluation_id)
                .group_by(SessionRow.run_id)
            )
            .tuples()
            .all()
        )
        runs = [
            RunSummary(r.id, r.name, r.status, counts.get(r.id, 0), r.created_at)
            for r in s.scalars(
                select(RunRow)
                .where(RunRow.evaluation_id == evaluation_id)
                .order_by(RunRow.created_at)
            )
        ]
        return Progress(assignments, sessions, _passes_by_category(s, evaluation_id), runs)


def _passes_by_category(s: Session, evaluation_id: str) -> dict[str, dict[int, int]]:
    """Category → pass number → human passes stored."""
    rows = s.execute(
        select(AnnotationTaskRow.category, AnnotationTaskRow.pass_no, func.count())
        .where(
            AnnotationTaskRow.evaluation_id == evaluation_id,
            AnnotationTaskRow.status == TaskStatus.DONE,
        )
        .group_by(AnnotationTaskRow.category, AnnotationTaskRow.pass_no)
    )
    result: dict[str, dict[int, int]] = {}
    for category, pass_no, count in rows:
        result.setdefault(category, {})[pass_no] = count
    return result
