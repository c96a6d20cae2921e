"""What a senior annotator oversees: the human passes in the categories they were assigned.

A senior works on the categories an admin assigned them, like any annotator; their reviews
and resolutions cover the passes of those (evaluation, category) queues only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from corix.assessment import AnnotationSchema, Category
from corix.storage.orm import AnnotationPassRow
from corix.storage.orm_web import AnnotationTaskRow, AnnotatorQueueRow
from corix.web.services.accounts import SignedInUser
from corix.web.services.evaluations import evaluation_settings

AnswerKey = tuple[str, int | None]
"""Question id and turn index (``None`` for a dialogue-level question)."""


@dataclass(frozen=True)
class PassSummary:
    id: int
    session_id: str
    category: Category
    annotator: str
    pass_no: int
    flagged: bool
    note: str | None
    created_at: datetime
    seconds_on_item: float | None
    """The time the annotator spent on the dialogue (``None`` when not measured)."""
    verdict: str | None = None


@dataclass
class SeniorScope:
    """The (evaluation, category) queues a senior works on, with each evaluation's settings."""

    categories: dict[str, set[str]] = field(default_factory=dict)
    review_rate: dict[str, float] = field(default_factory=dict)

    def covers(self, evaluation_id: str, category_id: str) -> bool:
        return category_id in self.categories.get(evaluation_id, set())


def senior_scope(s: Session, user: SignedInUser) -> SeniorScope:
    scope = SeniorScope()
    for queue in s.scalars(select(AnnotatorQueueRow).where(AnnotatorQueueRow.user_id == user.id)):
        scope.categories.setdefault(queue.evaluation_id, set()).add(queue.category)
        settings = evaluation_settings(s, queue.evaluation_id)
        scope.review_rate[queue.evaluation_id] = settings.review_rate
    return scope


def passes_in_scope(s: Session, scope: SeniorScope) -> list[tuple[AnnotationPassRow, str]]:
    """Human passes (with their evaluation) in the senior's queues."""
    found: list[tuple[AnnotationPassRow, str]] = []
    for evaluation_id, categories in scope.categories.items():
        rows = s.execute(
            select(AnnotationPassRow, AnnotationTaskRow.evaluation_id)
            .join(AnnotationTaskRow, AnnotationTaskRow.pass_id == AnnotationPassRow.id)
            .where(
                AnnotationTaskRow.evaluation_id == evaluation_id,
                AnnotationPassRow.category.in_(categories),
            )
            .options(selectinload(AnnotationPassRow.answers))
            .order_by(AnnotationPassRow.id)
        )
        found.extend((row, evaluation) for row, evaluation in rows)
    return found


def seconds_on_items(s: Session, pass_ids: Iterable[int]) -> dict[int, float | None]:
    """Pass id → the time its annotator spent on the dialogue, for the given passes."""
    rows = s.execute(
        select(AnnotationTaskRow.pass_id, AnnotationTaskRow.seconds_on_item).where(
            AnnotationTaskRow.pass_id.in_(list(pass_ids))
        )
    )
    return {pass_id: seconds for pass_id, seconds in rows.tuples() if pass_id is not None}


def pass_summary(
    schema: AnnotationSchema,
    row: AnnotationPassRow,
    seconds_on_item: float | None,
    verdict: str | None = None,
) -> PassSummary:
    return PassSummary(
        id=row.id,
        session_id=row.session_id,
        category=schema.category(row.category),
        annotator=row.annotator,
        pass_no=row.pass_no,
        flagged=row.flagged,
        note=row.note,
        created_at=row.created_at,
        seconds_on_item=seconds_on_item,
        verdict=verdict,
    )


def answer_value(number: float | None, text: str | None) -> str | float:
    """An answer as stored in its number and text columns, as one value."""
    if number is not None:
        return number
    return text or ""
