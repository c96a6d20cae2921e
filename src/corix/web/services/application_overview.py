"""Applications of a series as the admin sees them: version, lifecycle and failures so far."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, aliased

from corix.storage.orm import ApplicationRow, SessionRow, TurnRow
from corix.storage.orm_web import ApplicationOptionsRow, ApplicationStatusRow

MAX_ERROR_CHARS = 300


@dataclass(frozen=True)
class ApplicationInfo:
    """An application as the admin sees it. Credentials are reported as present, never shown."""

    id: int
    name: str
    spec: str
    options: dict[str, Any]
    has_credentials: bool
    version: str | None = None
    retired: bool = False
    replaced_by: str | None = None
    failed_sessions: int = 0
    """Sessions in which the application failed to answer at least once."""
    last_error: str | None = None

    @property
    def active(self) -> bool:
        return not self.retired


def application_overview(s: Session, evaluation_id: str) -> list[ApplicationInfo]:
    """Every application of the series, retired ones included, by name."""
    successor = aliased(ApplicationRow)
    rows = s.execute(
        select(
            ApplicationRow,
            ApplicationOptionsRow.options,
            ApplicationStatusRow.retired_at,
            successor.name,
        )
        .outerjoin(ApplicationOptionsRow, ApplicationOptionsRow.application_id == ApplicationRow.id)
        .outerjoin(ApplicationStatusRow, ApplicationStatusRow.application_id == ApplicationRow.id)
        .outerjoin(successor, successor.id == ApplicationStatusRow.replaced_by)
        .where(ApplicationRow.evaluation_id == evaluation_id)
        .order_by(ApplicationRow.name)
    ).all()
    failures = _failures(s, [row.id for row, *_ in rows])
    return [
        ApplicationInfo(
            id=row.id,
            name=row.name,
            spec=row.spec,
            options=options or {},
            has_credentials=bool(row.auth),
            version=row.version,
            retired=retired_at is not None,
            replaced_by=replaced_by,
            failed_sessions=failures.get(row.id, (0, None))[0],
            last_error=failures.get(row.id, (0, None))[1],
        )
        for row, options, retired_at, replaced_by in rows
    ]


def _failures(s: Session, application_ids: list[int]) -> dict[int, tuple[int, str | None]]:
    """Application id → (sessions with a failed turn, the latest failure's text)."""
    if not application_ids:
        return {}
    counts = s.execute(
        select(
            SessionRow.application_id,
            func.count(func.distinct(SessionRow.id)),
            func.max(TurnRow.id),
        )
        .join(TurnRow, TurnRow.session_id == SessionRow.id)
        .where(SessionRow.application_id.in_(application_ids), TurnRow.error.is_not(None))
        .group_by(SessionRow.application_id)
    ).all()
    last_turns = [last for _, _, last in counts]
    latest: dict[int, str | None] = dict(
        s.execute(select(TurnRow.id, TurnRow.error).where(TurnRow.id.in_(last_turns)))
        .tuples()
        .all()
    )
    return {
        application_id: (sessions, (latest.get(last) or "")[:MAX_ERROR_CHARS] or None)
        for application_id, sessions, last in counts
    }
