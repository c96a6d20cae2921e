"""Disagreements between passes, side by side, and the senior's resolutions.

Disagreements are never overwritten: a resolution is stored next to the passes, and a
disagreement the senior cannot settle is recorded as ``unresolved``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from corix.assessment import AnnotationSchema, Category, Question, QuestionLevel, QuestionType
from corix.storage import Database
from corix.storage.web import Duplicate, Transaction, transaction
from corix.storage.web import passes as store
from corix.storage.web.passes import HumanPass, NewResolution
from corix.web.services.accounts import SignedInUser
from corix.web.services.annotation_forms import field_name
from corix.web.services.dialogues import BlindDialogue, blind_dialogue
from corix.web.services.senior_scope import (
    PassSummary,
    answer_value,
    answers_of,
    pass_summary,
    passes_in_scope,
    senior_scope,
)
from corix.web.services.service_errors import Conflict, Forbidden, InputError, NotFound

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
        """The disagreements in the senior's categories, but those the senior took part in
        (another senior resolves them)."""
        with transaction(self._db) as tx:
            return self._items(
                tx, passes_in_scope(tx, senior_scope(tx, user)), without_user=user.id
            )

    def series_disagreements(self, evaluation_id: str) -> list[DisagreementItem]:
        """Every disagreement between the people annotating a series (the admin's view)."""
        with transaction(self._db) as tx:
            return self._items(tx, store.human_passes(tx, evaluation_id=evaluation_id))

    def _items(
        self, tx: Transaction, rows: list[HumanPass], *, without_user: int | None = None
    ) -> list[DisagreementItem]:
        grouped: defaultdict[tuple[str, str], list[HumanPass]] = defaultdict(list)
        for row in rows:
            grouped[(row.session_id, row.category)].append(row)
        items = []
        for (session_id, category_id), passes in sorted(grouped.items()):
            if len(passes) < 2 or any(row.user_id == without_user for row in passes):
                continue
            view = self._view(tx, session_id, category_id, passes)
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
        with transaction(self._db) as tx:
            passes = self._item_passes(tx, user, session_id, category_id)
            return self._view(tx, session_id, category_id, passes)

    def series_consensus(
        self, evaluation_id: str, session_id: str, category_id: str
    ) -> ConsensusView:
        """One dialogue's passes side by side with their resolutions, to read (the admin)."""
        with transaction(self._db) as tx:
            passes = store.human_passes(
                tx, evaluation_id=evaluation_id, session_id=session_id, category=category_id
            )
            if not passes:
                raise NotFound("this series has no passes for that dialogue and category")
            return self._view(tx, session_id, category_id, passes)

    def _item_passes(
        self, tx: Transaction, user: SignedInUser, session_id: str, category_id: str
    ) -> list[HumanPass]:
        rows = store.human_passes(tx, session_id=session_id, category=category_id, for_update=True)
        if not rows:
            raise NotFound("there are no passes for this dialogue and category")
        scope = senior_scope(tx, user)
        if not all(scope.covers(row.evaluation_id, category_id) for row in rows):
            raise Forbidden("this dialogue is outside the categories you review")
        return rows

    def _view(
        self, tx: Transaction, session_id: str, category_id: str, passes: list[HumanPass]
    ) -> ConsensusView:
        category = self._schema.category(category_id)
        dialogue = blind_dialogue(tx, session_id)
        seconds = store.seconds_on_items(tx, (row.id for row in passes))
        by_pass = [answers_of(row) for row in passes]
        resolutions = {
            (r.question_id, r.turn_index): r for r in store.resolutions(tx, session_id, category_id)
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
                        resolution_value=answer_value(resolution.value) if resolution else None,
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
            with transaction(self._db) as tx:
                return self._record(tx, user, session_id, category_id, form)
        except Duplicate:
            raise Conflict(
                "another senior resolved this dialogue at the same moment; reload and check"
            ) from None

    def _record(
        self,
        tx: Transaction,
        user: SignedInUser,
        session_id: str,
        category_id: str,
        form: Mapping[str, str],
    ) -> int:
        passes = self._item_passes(tx, user, session_id, category_id)
        if any(row.user_id == user.id for row in passes):
            raise Forbidden(
                "you annotated this dialogue in this category: another senior resolves it"
            )
        view = self._view(tx, session_id, category_id, passes)
        problems: dict[str, str] = {}
        chosen: list[NewResolution] = []
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
        store.replace_resolutions(tx, session_id, category_id, chosen)
        return len(chosen)


def _as_text(value: str | float) -> str:
    return f"{value:g}" if isinstance(value, float) else value


def _resolution(
    row: ConsensusRow,
    status: str,
    value: str | float | None,
    note: str | None,
    user: SignedInUser,
) -> NewResolution:
    if row.question.type is QuestionType.SLIDER and isinstance(value, str):
        value = float(value)
    return NewResolution(
        question_id=row.question.id,
        turn_index=row.turn,
        status=status,
        value=value,
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
