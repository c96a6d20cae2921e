"""Senior resolutions of a series, as the admin reads them (the seniors record them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from corix.assessment import AnnotationSchema, Category, Question
from corix.storage import Database
from corix.storage.orm import ResolutionRow, RunRow, SessionRow
from corix.storage.orm_web import UserRow
from corix.web.services.senior_scope import answer_value


@dataclass(frozen=True)
class ResolutionView:
    session_id: str
    category: Category
    question: Question
    turn_index: int | None
    status: str
    value: str | float
    note: str | None
    senior: str | None
    created_at: datetime

    @property
    def dialogue(self) -> str:
        """A short reference to the dialogue (the start of its opaque id)."""
        return self.session_id[:8]


def series_resolutions(
    db: Database, schema: AnnotationSchema, evaluation_id: str
) -> list[ResolutionView]:
    with db.session() as s:
        rows = s.execute(
            select(ResolutionRow, UserRow.username)
            .join(SessionRow, SessionRow.id == ResolutionRow.session_id)
            .join(RunRow, RunRow.id == SessionRow.run_id)
            .outerjoin(UserRow, UserRow.id == ResolutionRow.resolved_by)
            .where(RunRow.evaluation_id == evaluation_id)
            .order_by(ResolutionRow.created_at)
        ).tuples()
        return [
            ResolutionView(
                session_id=row.session_id,
                category=schema.category(row.category),
                question=schema.category(row.category).question(row.question_id),
                turn_index=row.turn_index,
                status=row.status,
                value=answer_value(row.value_num, row.value_text),
                note=row.note,
                senior=username,
                created_at=row.created_at,
            )
            for row, username in rows
        ]
