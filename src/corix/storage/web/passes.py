"""The passes people made in the web's queues, seniors' reviews of them and resolutions of
their disagreements (stored next to the passes, never over them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import selectinload
from sqlalchemy.sql.expression import ColumnElement

from corix.storage.database import Database
from corix.storage.orm import AnnotationPassRow, ResolutionRow, RunRow, SessionRow
from corix.storage.orm_web import AnnotationTaskRow, PassReviewRow, UserRow
from corix.storage.store_records import StoredAnswer, StoredValue, split_value
from corix.storage.transactions import Transaction, transaction

__all__ = [
    "HUMAN",
    "HumanPass",
    "NewResolution",
    "ResolutionRecord",
    "add_review",
    "annotator_kinds",
    "human_passes",
    "replace_resolutions",
    "resolutions",
    "review_of",
    "seconds_on_items",
    "series_resolutions",
    "verdicts",
]

HUMAN = "human"
"""The annotator kind of a person's pass."""


@dataclass(frozen=True, slots=True)
class HumanPass:
    """A person's pass in a series, with its answers."""

    id: int
    evaluation_id: str
    session_id: str
    category: str
    annotator: str
    user_id: int | None
    pass_no: int
    flagged: bool
    note: str | None
    created_at: datetime
    answers: tuple[StoredAnswer, ...]


@dataclass(frozen=True, slots=True)
class ResolutionRecord:
    session_id: str
    category: str
    question_id: str
    turn_index: int | None
    status: str
    value: StoredValue | None
    note: str | None
    senior: str | None
    """The username of the senior who resolved it (``None`` once the account is gone)."""
    created_at: datetime


@dataclass(frozen=True, slots=True)
class NewResolution:
    question_id: str
    turn_index: int | None
    status: str
    value: StoredValue | None
    note: str | None
    resolved_by: int


def _value(number: float | None, text: str | None) -> StoredValue | None:
    return number if number is not None else text


# -- people's passes -------------------------------------------------------------------------


def human_passes(
    tx: Transaction,
    *,
    evaluation_id: str | None = None,
    categories: Iterable[str] | None = None,
    session_id: str | None = None,
    category: str | None = None,
    pass_id: int | None = None,
    by_id: bool = False,
    for_update: bool = False,
) -> list[HumanPass]:
    """The passes people made through the web's queues, with their answers and series,
    narrowed by each argument given, by pass number then id (``by_id``: by id alone).

    ``for_update`` locks them until the unit of work ends: two seniors resolving one item
    at once take turns (a no-op on SQLite, whose writers are serialized anyway).
    """
    query = (
        select(AnnotationPassRow, AnnotationTaskRow.evaluation_id)
        .join(AnnotationTaskRow, AnnotationTaskRow.pass_id == AnnotationPassRow.id)
        .options(selectinload(AnnotationPassRow.answers))
    )
    if by_id:
        query = query.order_by(AnnotationPassRow.id)
    else:
        query = query.order_by(AnnotationPassRow.pass_no, AnnotationPassRow.id)
    if evaluation_id is not None:
        query = query.where(AnnotationTaskRow.evaluation_id == evaluation_id)
    if categories is not None:
        query = query.where(AnnotationPassRow.category.in_(list(categories)))
    if session_id is not None:
        query = query.where(AnnotationPassRow.session_id == session_id)
    if category is not None:
        query = query.where(AnnotationPassRow.category == category)
    if pass_id is not None:
        query = query.where(AnnotationPassRow.id == pass_id)
    if for_update:
        query = query.with_for_update(of=AnnotationPassRow)
    return [_human_pass(row, evaluation) for row, evaluation in tx.execute(query).tuples()]


def _human_pass(row: AnnotationPassRow, evaluation_id: str) -> HumanPass:
    return HumanPass(
        id=row.id,
        evaluation_id=evaluation_id,
        session_id=row.session_id,
        category=row.category,
        annotator=row.annotator,
        user_id=row.user_id,
        pass_no=row.pass_no,
        flagged=row.flagged,
        note=row.note,
        created_at=row.created_at,
        answers=tuple(
            StoredAnswer(a.question_id, a.turn_index, _value(a.value_num, a.value_text), None)
            for a in row.answers
        ),
    )


def seconds_on_items(tx: Transaction, pass_ids: Iterable[int]) -> dict[int, float | None]:
    """Pass id → the time its annotator spent on the dialogue, for the given passes."""
    rows = tx.execute(
        select(AnnotationTaskRow.pass_id, AnnotationTaskRow.seconds_on_item).where(
            AnnotationTaskRow.pass_id.in_(list(pass_ids))
        )
    )
    return {pass_id: seconds for pass_id, seconds in rows.tuples() if pass_id is not None}


def annotator_kinds(db: Database, run_ids: Sequence[str]) -> set[str]:
    """The kinds of annotator (human, llm, reference …) that made passes in ``run_ids``."""
    with transaction(db) as tx:
        return set(
            tx.scalars(
                select(AnnotationPassRow.annotator_kind)
                .join(SessionRow, SessionRow.id == AnnotationPassRow.session_id)
                .where(SessionRow.run_id.in_(list(run_ids)))
                .distinct()
            )
        )


# -- reviews ---------------------------------------------------------------------------------


def verdicts(tx: Transaction) -> dict[int, str]:
    """Pass id → the verdict of its review, for every reviewed pass."""
    rows = tx.execute(select(PassReviewRow.pass_id, PassReviewRow.verdict))
    return dict(rows.tuples().all())


def review_of(tx: Transaction, pass_id: int) -> str | None:
    """The verdict of the pass's review, if it has one."""
    return tx.scalar(select(PassReviewRow.verdict).where(PassReviewRow.pass_id == pass_id))


def add_review(
    tx: Transaction, pass_id: int, reviewer_id: int, verdict: str, note: str | None
) -> None:
    """A senior's review; a second one of the same pass raises
    :class:`~corix.storage.web.Duplicate` when the unit of work commits."""
    tx.add(PassReviewRow(pass_id=pass_id, reviewer_id=reviewer_id, verdict=verdict, note=note))


# -- resolutions -----------------------------------------------------------------------------


def _resolution(row: ResolutionRow, senior: str | None) -> ResolutionRecord:
    return ResolutionRecord(
        session_id=row.session_id,
        category=row.category,
        question_id=row.question_id,
        turn_index=row.turn_index,
        status=row.status,
        value=_value(row.value_num, row.value_text),
        note=row.note,
        senior=senior,
        created_at=row.created_at,
    )


def resolutions(tx: Transaction, session_id: str, category: str) -> list[ResolutionRecord]:
    """The resolutions of one dialogue and category (the senior's name left out)."""
    rows = tx.scalars(
        select(ResolutionRow).where(
            ResolutionRow.session_id == session_id, ResolutionRow.category == category
        )
    )
    return [_resolution(row, None) for row in rows]


def series_resolutions(db: Database, evaluation_id: str) -> list[ResolutionRecord]:
    """Every resolution of the series' dialogues with its senior's username, oldest first."""
    with transaction(db) as tx:
        rows = tx.execute(
            select(ResolutionRow, UserRow.username)
            .join(SessionRow, SessionRow.id == ResolutionRow.session_id)
            .join(RunRow, RunRow.id == SessionRow.run_id)
            .outerjoin(UserRow, UserRow.id == ResolutionRow.resolved_by)
            .where(RunRow.evaluation_id == evaluation_id)
            .order_by(ResolutionRow.created_at)
        ).tuples()
        return [_resolution(row, username) for row, username in rows]


def replace_resolutions(
    tx: Transaction, session_id: str, category: str, chosen: Sequence[NewResolution]
) -> None:
    """Store resolutions, each replacing an earlier one of the same question and turn, so
    the record holds the senior's final word; a concurrent one raises
    :class:`~corix.storage.web.Duplicate` when the unit of work commits."""
    for resolution in chosen:
        tx.execute(
            delete(ResolutionRow).where(
                ResolutionRow.session_id == session_id,
                ResolutionRow.category == category,
                ResolutionRow.question_id == resolution.question_id,
                _same_turn(resolution.turn_index),
            )
        )
        tx.add(
            ResolutionRow(
                session_id=session_id,
                category=category,
                question_id=resolution.question_id,
                turn_index=resolution.turn_index,
                status=resolution.status,
                note=resolution.note,
                resolved_by=resolution.resolved_by,
                **split_value(resolution.value),
            )
        )


def _same_turn(turn: int | None) -> ColumnElement[bool]:
    column = ResolutionRow.turn_index
    return column.is_(None) if turn is None else column == turn
