"""Senior resolutions of a series, as the admin reads them (the seniors record them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from corix.assessment import AnnotationSchema, Category, Question
from corix.storage import Database
from corix.storage.web.passes import series_resolutions as stored_resolutions
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
    return [
        ResolutionView(
            session_id=row.session_id,
            category=schema.category(row.category),
            question=schema.category(row.category).question(row.question_id),
            turn_index=row.turn_index,
            status=row.status,
            value=answer_value(row.value),
            note=row.note,
            senior=row.senior,
            created_at=row.created_at,
        )
        for row in stored_resolutions(db, evaluation_id)
    ]
