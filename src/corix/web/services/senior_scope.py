"""What a senior annotator oversees: the human passes in the categories they were assigned.

A senior works on the categories an admin assigned them, like any annotator; their reviews
and resolutions cover the passes of those (evaluation, category) queues only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from corix.assessment import AnnotationSchema, Category
from corix.storage import StoredValue
from corix.storage.web import Transaction, passes, queues
from corix.storage.web.passes import HumanPass
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


def senior_scope(tx: Transaction, user: SignedInUser) -> SeniorScope:
    scope = SeniorScope()
    for queue, _name in queues.queues_of(tx, user.id):
        scope.categories.setdefault(queue.evaluation_id, set()).add(queue.category)
        settings = evaluation_settings(tx, queue.evaluation_id)
        scope.review_rate[queue.evaluation_id] = settings.review_rate
    return scope


def passes_in_scope(tx: Transaction, scope: SeniorScope) -> list[HumanPass]:
    """Human passes in the senior's queues, series by series, in the order they were made."""
    found: list[HumanPass] = []
    for evaluation_id, categories in scope.categories.items():
        found.extend(
            passes.human_passes(tx, evaluation_id=evaluation_id, categories=categories, by_id=True)
        )
    return found


def pass_summary(
    schema: AnnotationSchema,
    row: HumanPass,
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


def answer_value(value: StoredValue | None) -> str | float:
    """A stored answer as one value to show (an answer with neither number nor text: "")."""
    return "" if value is None else value


def answers_of(row: HumanPass) -> dict[AnswerKey, str | float]:
    """The pass's answers by question and turn."""
    return {(a.question_id, a.turn_index): answer_value(a.value) for a in row.answers}
