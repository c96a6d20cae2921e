"""Senior annotators: sampled pass reviews, disagreements side by side, and resolutions.

A senior works on the categories an admin assigned them, like any annotator. Disagreements
between passes are never overwritten: a resolution is stored next to the passes, and a
disagreement the senior cannot settle is recorded as ``unresolved``.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, selectinload
from sqlalchemy.sql.expression import ColumnElement

from corix.assessment import AnnotationSchema, Category, Question, QuestionType
from corix.storage import Database
from corix.storage.orm import AnnotationPassRow, ResolutionRow
from corix.storage.orm_web import (
    AnnotationTaskRow,
    AnnotatorQueueRow,
    EvaluationSettingsRow,
    PassReviewRow,
)
from corix.web.services.accounts import SignedInUser
from corix.web.services.annotation_forms import field_name
from corix.web.services.dialogues import BlindDialogue, blind_dialogue
from corix.web.services.errors import Conflict, Forbidden, InputError, NotFound
from corix.web.services.evaluations import EvaluationSettings

UNRESOLVED = "__unresolved__"
VERDICTS = ("agree", "disagree")
AnswerKey = tuple[str, int | None]


class ItemStatus:
    OPEN = "open"
    RESOLVED = "resolved"
    UNRESOLVED = "unresolved"


def is_sampled(pass_id: int, rate: float) -> bool:
    """A fixed pseudo-random share of passes: the same passes stay sampled across requests."""
    digest = hashlib.sha256(f"review:{pass_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def display(question: Question, value: str | float | None) -> str:
    """An answer as people read it: option labels, "Yes"/"No", ``7`` rather than ``7.0``."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    if question.type is QuestionType.YES_NO:
        return value.capitalize()
    for option in question.options:
        if option.value == value:
            return option.label
    return value


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
    verdict: str | None = None


@dataclass(frozen=True)
class PassDetail:
    summary: PassSummary
    dialogue: BlindDialogue
    answers: dict[AnswerKey, str | float]


@dataclass(frozen=True)
class ConsensusRow:
    question: Question
    turn: int | None
    values: list[str | float | None]
    resolution_status: str | None
    resolution_value: str | float | None
    resolution_note: str | None

    @property
    def choices(self) -> list[str | float]:
        """The distinct values the passes gave, in first-seen order."""
        seen: list[str | float] = []
        for value in self.values:
            if value is not None and value not in seen:
                seen.append(value)
        return seen

    @property
    def disagrees(self) -> bool:
        return sum(v is not None for v in self.values) >= 2 and len(self.choices) > 1

    @property
    def field(self) -> str:
        return field_name(self.question.id, self.turn, prefix="r")


@dataclass(frozen=True)
class ConsensusView:
    session_id: str
    category: Category
    passes: list[PassSummary]
    rows: list[ConsensusRow]
    dialogue: BlindDialogue

    @property
    def disagreements(self) -> list[ConsensusRow]:
        return [row for row in self.rows if row.disagrees]


@dataclass(frozen=True)
class DisagreementItem:
    session_id: str
    category: Category
    passes: int
    disagreements: int
    status: str


@dataclass
class _Scope:
    """The (evaluation, category) queues a senior works on, with each evaluation's settings."""

    categories: dict[str, set[str]] = field(default_factory=dict)
    review_rate: dict[str, float] = field(default_factory=dict)


class Review:
    def __init__(self, db: Database, schema: AnnotationSchema) -> None:
        self._db = db
        self._schema = schema

    # -- scope ---------------------------------------------------------------------------
    def _scope(self, s: Session, user: SignedInUser) -> _Scope:
        scope = _Scope()
        for queue in s.scalars(
            select(AnnotatorQueueRow).where(AnnotatorQueueRow.user_id == user.id)
        ):
            scope.categories.setdefault(queue.evaluation_id, set()).add(queue.category)
            settings = s.get(EvaluationSettingsRow, queue.evaluation_id)
            scope.review_rate[queue.evaluation_id] = (
                settings.review_rate if settings else EvaluationSettings().review_rate
            )
        return scope

    def _passes_in_scope(self, s: Session, scope: _Scope) -> list[tuple[AnnotationPassRow, str]]:
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

    def _summary(self, row: AnnotationPassRow, verdict: str | None = None) -> PassSummary:
        return PassSummary(
            id=row.id,
            session_id=row.session_id,
            category=self._schema.category(row.category),
            annotator=row.annotator,
            pass_no=row.pass_no,
            flagged=row.flagged,
            note=row.note,
            created_at=row.created_at,
            verdict=verdict,
        )

    def evaluations_of(self, user: SignedInUser) -> list[str]:
        """The evaluation series the senior annotates in, in a stable order."""
        with self._db.session() as s:
            return sorted(self._scope(s, user).categories)

    # -- sampled reviews -----------------------------------------------------------------
    def review_sample(self, user: SignedInUser) -> list[PassSummary]:
        with self._db.session() as s:
            scope = self._scope(s, user)
            verdicts = dict(
                s.execute(select(PassReviewRow.pass_id, PassReviewRow.verdict)).tuples().all()
            )
            return [
                self._summary(row, verdicts.get(row.id))
                for row, evaluation in self._passes_in_scope(s, scope)
                if row.user_id != user.id and is_sampled(row.id, scope.review_rate[evaluation])
            ]

    def flagged(self, user: SignedInUser) -> list[PassSummary]:
        """Passes flagged for sensitive information, or carrying a note, in the senior's scope."""
        with self._db.session() as s:
            scope = self._scope(s, user)
            return [
                self._summary(row)
                for row, _evaluation in self._passes_in_scope(s, scope)
                if row.flagged or row.note
            ]

    def pass_detail(self, user: SignedInUser, pass_id: int) -> PassDetail:
        with self._db.session() as s:
            row = self._pass_in_scope(s, user, pass_id)
            review = s.scalars(
                select(PassReviewRow).where(PassReviewRow.pass_id == pass_id)
            ).first()
            return PassDetail(
                summary=self._summary(row, review.verdict if review else None),
                dialogue=blind_dialogue(s, row.session_id),
                answers={
                    (a.question_id, a.turn_index): _value(a.value_num, a.value_text)
                    for a in row.answers
                    if a.value_num is not None or a.value_text is not None
                },
            )

    def record_review(
        self, user: SignedInUser, pass_id: int, verdict: str, note: str | None
    ) -> None:
        if verdict not in VERDICTS:
            raise InputError("choose agree or disagree", {"verdict": "required"})
        with self._db.session() as s:
            row = self._pass_in_scope(s, user, pass_id)
            if row.user_id == user.id:
                raise Forbidden("you cannot review your own pass")
            if s.scalars(select(PassReviewRow.id).where(PassReviewRow.pass_id == pass_id)).first():
                raise Conflict("this pass has already been reviewed")
            s.add(PassReviewRow(pass_id=pass_id, reviewer_id=user.id, verdict=verdict, note=note))

    def _pass_in_scope(self, s: Session, user: SignedInUser, pass_id: int) -> AnnotationPassRow:
        found = (
            s.execute(
                select(AnnotationPassRow, AnnotationTaskRow.evaluation_id)
                .join(AnnotationTaskRow, AnnotationTaskRow.pass_id == AnnotationPassRow.id)
                .where(AnnotationPassRow.id == pass_id)
                .options(selectinload(AnnotationPassRow.answers))
            )
            .tuples()
            .first()
        )
        if found is None:
            raise NotFound("there is no such pass")
        row, evaluation = found
        if row.category not in self._scope(s, user).categories.get(evaluation, set()):
            raise Forbidden("this pass is outside the categories you review")
        return row

    # -- disagreements -------------------------------------------------------------------
    def disagreements(self, user: SignedInUser) -> list[DisagreementItem]:
        with self._db.session() as s:
            scope = self._scope(s, user)
            grouped: defaultdict[tuple[str, str], list[AnnotationPassRow]] = defaultdict(list)
            for row, _evaluation in self._passes_in_scope(s, scope):
                grouped[(row.session_id, row.category)].append(row)
            items = []
            for (session_id, category_id), passes in sorted(grouped.items()):
                if len(passes) < 2:
                    continue
                view = self._consensus(s, session_id, category_id, passes)
                disagreeing = view.disagreements
                if disagreeing:
                    items.append(
                        DisagreementItem(
                            session_id,
                            view.category,
                            len(passes),
                            len(disagreeing),
                            _item_status(disagreeing),
                        )
                    )
            return items

    def consensus(self, user: SignedInUser, session_id: str, category_id: str) -> ConsensusView:
        with self._db.session() as s:
            passes = self._item_passes(s, user, session_id, category_id)
            return self._consensus(s, session_id, category_id, passes)

    def _item_passes(
        self, s: Session, user: SignedInUser, session_id: str, category_id: str
    ) -> list[AnnotationPassRow]:
        rows = s.execute(
            select(AnnotationPassRow, AnnotationTaskRow.evaluation_id)
            .join(AnnotationTaskRow, AnnotationTaskRow.pass_id == AnnotationPassRow.id)
            .where(
                AnnotationPassRow.session_id == session_id,
                AnnotationPassRow.category == category_id,
            )
            .options(selectinload(AnnotationPassRow.answers))
            .order_by(AnnotationPassRow.pass_no)
        ).all()
        if not rows:
            raise NotFound("there are no passes for this dialogue and category")
        scope = self._scope(s, user)
        if any(category_id not in scope.categories.get(ev, set()) for _row, ev in rows):
            raise Forbidden("this dialogue is outside the categories you review")
        return [row for row, _evaluation in rows]

    def _consensus(
        self, s: Session, session_id: str, category_id: str, passes: list[AnnotationPassRow]
    ) -> ConsensusView:
        category = self._schema.category(category_id)
        dialogue = blind_dialogue(s, session_id)
        by_pass = [
            {(a.question_id, a.turn_index): _value(a.value_num, a.value_text) for a in row.answers}
            for row in passes
        ]
        resolutions = {
            (r.question_id, r.turn_index): r
            for r in s.scalars(
                select(ResolutionRow).where(
                    ResolutionRow.session_id == session_id, ResolutionRow.category == category_id
                )
            )
        }
        rows = []
        for question in category.questions:
            turns: list[int | None] = (
                [None] if question.level.value == "dialogue" else [t.index for t in dialogue.turns]
            )
            for turn in turns:
                key = (question.id, turn)
                resolution = resolutions.get(key)
                rows.append(
                    ConsensusRow(
                        question=question,
                        turn=turn,
                        values=[answers.get(key) for answers in by_pass],
                        resolution_status=resolution.status if resolution else None,
                        resolution_value=_value(resolution.value_num, resolution.value_text)
                        if resolution
                        else None,
                        resolution_note=resolution.note if resolution else None,
                    )
                )
        return ConsensusView(
            session_id, category, [self._summary(row) for row in passes], rows, dialogue
        )

    def resolve(
        self,
        user: SignedInUser,
        session_id: str,
        category_id: str,
        form: Mapping[str, str],
    ) -> int:
        """Record resolutions for the disagreements chosen in ``form``; return how many.

        Each disagreement takes one of the values the passes gave, or ``unresolved`` with
        a note; a disagreement left blank stays open. A later resolution replaces an
        earlier one of the same question, so the record holds the senior's final word.
        """
        with self._db.session() as s:
            passes = self._item_passes(s, user, session_id, category_id)
            view = self._consensus(s, session_id, category_id, passes)
            problems: dict[str, str] = {}
            chosen: list[ResolutionRow] = []
            for row in view.disagreements:
                raw = (form.get(row.field) or "").strip()
                note = (form.get(f"{row.field}:note") or "").strip() or None
                if not raw:
                    continue
                if raw == UNRESOLVED:
                    if note is None:
                        problems[row.field] = "say in the note why it stays unresolved"
                        continue
                    chosen.append(_resolution(row, ItemStatus.UNRESOLVED, None, note, user))
                    continue
                match = next((c for c in row.choices if _as_text(c) == raw), None)
                if match is None:
                    problems[row.field] = "choose one of the values the passes gave"
                    continue
                chosen.append(_resolution(row, ItemStatus.RESOLVED, match, note, user))
            if problems:
                raise InputError("some resolutions need fixing", problems)
            if not chosen:
                raise InputError("choose a resolution for at least one disagreement")
            for resolution in chosen:
                s.execute(
                    delete(ResolutionRow).where(
                        ResolutionRow.session_id == session_id,
                        ResolutionRow.category == category_id,
                        ResolutionRow.question_id == resolution.question_id,
                        _same_turn(resolution.turn_index),
                    )
                )
                resolution.session_id = session_id
                resolution.category = category_id
                s.add(resolution)
            return len(chosen)


def _value(number: float | None, text: str | None) -> str | float:
    if number is not None:
        return number
    return text or ""


def _as_text(value: str | float) -> str:
    return f"{value:g}" if isinstance(value, float) else value


def _same_turn(turn: int | None) -> ColumnElement[bool]:
    column = ResolutionRow.turn_index
    return column.is_(None) if turn is None else column == turn


def _resolution(
    row: ConsensusRow,
    status: str,
    value: str | float | None,
    note: str | None,
    user: SignedInUser,
) -> ResolutionRow:
    number = value if isinstance(value, float) else None
    text = value if isinstance(value, str) else None
    if row.question.type is QuestionType.SLIDER and isinstance(value, str):
        number, text = float(value), None
    return ResolutionRow(
        question_id=row.question.id,
        turn_index=row.turn,
        status=status,
        value_num=number,
        value_text=text,
        note=note,
        resolved_by=user.id,
    )


def _item_status(disagreeing: list[ConsensusRow]) -> str:
    statuses = [row.resolution_status for row in disagreeing]
    if any(status is None for status in statuses):
        return ItemStatus.OPEN
    if any(status == ItemStatus.UNRESOLVED for status in statuses):
        return ItemStatus.UNRESOLVED
    return ItemStatus.RESOLVED
