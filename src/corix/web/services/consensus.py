"""Disagreements between passes, side by side, and the senior's resolutions.

Disagreements are never overwritten: a resolution is stored next to the passes, and a
disagreement the senior cannot settle is recorded as ``unresolved``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import Select, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload
from sqlalchemy.sql.expression import ColumnElement

from corix.assessment import AnnotationSchema, Category, Question, QuestionLevel, QuestionType
from corix.storage import Database
from corix.storage.orm import AnnotationPassRow, ResolutionRow
from corix.storage.orm_web import AnnotationTaskRow
from corix.web.services.accounts import SignedInUser
from corix.web.services.annotation_forms import field_name
from corix.web.services.dialogues import BlindDialogue, blind_dialogue
from corix.web.services.errors import Conflict, Forbidden, InputError, NotFound
from corix.web.services.senior_scope import (
    PassSummary,
    answer_value,
    pass_summary,
    passes_in_scope,
    seconds_on_items,
    senior_scope,
)

UNRESOLVED = "__unresolved__"


class ItemStatus:
    OPEN = "open"
    RESOLVED = "resolved"
    UNRESOLVED = "unresolved"


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


class Consensus:
    def __init__(self, db: Database, schema: AnnotationSchema) -> None:
        self._db = db
        self._schema = schema

    def disagreements(self, user: SignedInUser) -> list[DisagreementItem]:
        """The disagreements in the senior's categories."""
        with self._db.session() as s:
            scope = senior_scope(s, user)
            return self._items(s, [row for row, _evaluation in passes_in_scope(s, scope)])

    def series_disagreements(self, evaluation_id: str) -> list[DisagreementItem]:
        """Every disagreement between the people annotating a series (the admin's view)."""
        with self._db.session() as s:
            return self._items(s, list(s.scalars(_series_passes(evaluation_id))))

    def _items(self, s: Session, rows: list[AnnotationPassRow]) -> list[DisagreementItem]:
        grouped: defaultdict[tuple[str, str], list[AnnotationPassRow]] = defaultdict(list)
        for row in rows:
            grouped[(row.session_id, row.category)].append(row)
        items = []
        for (session_id, category_id), passes in sorted(grouped.items()):
            if len(passes) < 2:
                continue
            view = self._view(s, session_id, category_id, passes)
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
            return self._view(s, session_id, category_id, passes)

    def series_consensus(
        self, evaluation_id: str, session_id: str, category_id: str
    ) -> ConsensusView:
        """One dialogue's passes side by side with their resolutions, to read (the admin)."""
        with self._db.session() as s:
            passes = list(
                s.scalars(
                    _series_passes(evaluation_id).where(
                        AnnotationPassRow.session_id == session_id,
                        AnnotationPassRow.category == category_id,
                    )
                )
            )
            if not passes:
                raise NotFound("this series has no passes for that dialogue and category")
            return self._view(s, session_id, category_id, passes)

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
            # Two seniors resolving one item at once take turns (a no-op on SQLite,
            # whose writers are serialized anyway).
            .with_for_update(of=AnnotationPassRow)
        ).all()
        if not rows:
            raise NotFound("there are no passes for this dialogue and category")
        scope = senior_scope(s, user)
        if not all(scope.covers(evaluation, category_id) for _row, evaluation in rows):
            raise Forbidden("this dialogue is outside the categories you review")
        return [row for row, _evaluation in rows]

    def _view(
        self, s: Session, session_id: str, category_id: str, passes: list[AnnotationPassRow]
    ) -> ConsensusView:
        category = self._schema.category(category_id)
        dialogue = blind_dialogue(s, session_id)
        seconds = seconds_on_items(s, (row.id for row in passes))
        by_pass = [
            {
                (a.question_id, a.turn_index): answer_value(a.value_num, a.value_text)
                for a in row.answers
            }
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
                [None]
                if question.level is QuestionLevel.DIALOGUE
                else [t.index for t in dialogue.turns]
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
                        resolution_value=answer_value(resolution.value_num, resolution.value_text)
                        if resolution
                        else None,
                        resolution_note=resolution.note if resolution else None,
                    )
                )
        return ConsensusView(
            session_id,
            category,
            [pass_summary(self._schema, row, seconds.get(row.id)) for row in passes],
            rows,
            dialogue,
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
        try:
            with self._db.session() as s:
                return self._record(s, user, session_id, category_id, form)
        except IntegrityError:
            raise Conflict(
                "another senior resolved this dialogue at the same moment; reload and check"
            ) from None

    def _record(
        self,
        s: Session,
        user: SignedInUser,
        session_id: str,
        category_id: str,
        form: Mapping[str, str],
    ) -> int:
        passes = self._item_passes(s, user, session_id, category_id)
        view = self._view(s, session_id, category_id, passes)
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


def _series_passes(evaluation_id: str) -> Select[tuple[AnnotationPassRow]]:
    """The people's passes of a series, in the order they were made."""
    return (
        select(AnnotationPassRow)
        .join(AnnotationTaskRow, AnnotationTaskRow.pass_id == AnnotationPassRow.id)
        .where(AnnotationTaskRow.evaluation_id == evaluation_id)
        .options(selectinload(AnnotationPassRow.answers))
        .order_by(AnnotationPassRow.pass_no, AnnotationPassRow.id)
    )


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
