"""What an admin watches: sessions done, annotations per category and pass, automated runs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from corix.storage import Database
from corix.storage.web import assignments, queues, series, transaction
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
    with transaction(db) as tx:
        counts = series.sessions_by_run(tx, evaluation_id)
        runs = [
            RunSummary(r.id, r.name, r.status, counts.get(r.id, 0), r.created_at)
            for r in series.runs(tx, evaluation_id)
        ]
        return Progress(
            assignments.status_counts(tx, evaluation_id),
            series.complete_sessions_by_level(tx, evaluation_id),
            queues.pass_counts(tx, evaluation_id, TaskStatus.DONE),
            runs,
        )
