"""Human annotation in the web: annotators' queues, tasks (passes in the making), the
passes people made, seniors' reviews and resolutions.

A person's pass is stored by :func:`corix.storage.annotations.add_pass`, the same write as
``corix annotate`` and imported labels; the task only points to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, delete, exists, func, or_, select, update
from sqlalchemy.orm import selectinload
from sqlalchemy.sql.expression import ColumnElement, Exists

from corix.storage.annotations import add_pass
from corix.storage.clock import utcnow
from corix.storage.database import Database
from corix.storage.orm import (
    AnnotationAnswerRow,
    AnnotationPassRow,
    EvaluationRow,
    ResolutionRow,
    RunRow,
    SessionRow,
)
from corix.storage.orm_web import (
    AnnotationTaskRow,
    AnnotatorQueueRow,
    PassReviewRow,
    UserRow,
)
from corix.storage.records import NewPass, StoredAnswer, StoredValue, split_value
from corix.storage.web.selection import for_humans
from corix.storage.web.transactions import Transaction, transaction

__all__ = [
    "HUMAN",
    "HumanPass",
    "NewResolution",
    "QueueRecord",
    "ResolutionRecord",
    "TaskRecord",
    "Violation",
    "add_queues",
    "add_review",
    "add_task",
    "add_task_pass",
    "annotator_kinds",
    "candidates",
    "close_task",
    "done_count",
    "human_passes",
    "next_pass_no",
    "open_task_token",
    "pass_counts",
    "queue",
    "queue_categories",
    "queue_id",
    "queues_of",
    "queues_of_series",
    "replace_resolutions",
    "resolutions",
    "review_of",
    "seconds_on_items",
    "series_resolutions",
    "skip_task",
    "task",
    "verdicts",
]

HUMAN = "human"
"""The annotator kind of a person's pass."""


@dataclass(frozen=True, slots=True)
class QueueRecord:
    """An annotator's assignment to one category of one series."""

    id: int
    evaluation_id: str
    user_id: int
    category: str


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """A dialogue handed to one annotator for one category: a pass in the making."""

    id: int
    token: str
    evaluation_id: str
    user_id: int
    session_id: str
    category: str
    pass_no: int
    status: str
    created_at: datetime


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
class Violation:
    """When a dialogue has a violation: a person's dialogue-level answer in the screening
    category equals one of ``any_of`` (question id, value)."""

    screening: str
    any_of: tuple[tuple[str, str], ...]


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


# -- queues ----------------------------------------------------------------------------------


def _queue(row: AnnotatorQueueRow) -> QueueRecord:
    return QueueRecord(row.id, row.evaluation_id, row.user_id, row.category)


def queues_of(tx: Transaction, user_id: int) -> list[tuple[QueueRecord, str]]:
    """The annotator's queues with their series' names."""
    rows = tx.execute(
        select(AnnotatorQueueRow, EvaluationRow.name)
        .join(EvaluationRow, EvaluationRow.id == AnnotatorQueueRow.evaluation_id)
        .where(AnnotatorQueueRow.user_id == user_id)
    ).tuples()
    return [(_queue(row), name) for row, name in rows]


def queue(tx: Transaction, queue_id: int) -> QueueRecord | None:
    row = tx.get(AnnotatorQueueRow, queue_id)
    return None if row is None else _queue(row)


def queue_id(tx: Transaction, user_id: int, evaluation_id: str, category: str) -> int | None:
    return tx.scalar(
        select(AnnotatorQueueRow.id).where(
            AnnotatorQueueRow.user_id == user_id,
            AnnotatorQueueRow.evaluation_id == evaluation_id,
            AnnotatorQueueRow.category == category,
        )
    )


def queue_categories(tx: Transaction, evaluation_id: str, user_id: int) -> set[str]:
    return set(
        tx.scalars(
            select(AnnotatorQueueRow.category).where(
                AnnotatorQueueRow.evaluation_id == evaluation_id,
                AnnotatorQueueRow.user_id == user_id,
            )
        )
    )


def add_queues(
    tx: Transaction, evaluation_id: str, user_id: int, categories: Iterable[str]
) -> None:
    for category in categories:
        tx.add(AnnotatorQueueRow(evaluation_id=evaluation_id, user_id=user_id, category=category))


def queues_of_series(db: Database, evaluation_id: str) -> list[tuple[str, str]]:
    """(username, category) of every queue of the series, by username and category."""
    with transaction(db) as tx:
        rows = tx.execute(
            select(UserRow.username, AnnotatorQueueRow.category)
            .join(UserRow, UserRow.id == AnnotatorQueueRow.user_id)
            .where(AnnotatorQueueRow.evaluation_id == evaluation_id)
            .order_by(UserRow.username, AnnotatorQueueRow.category)
        )
        return list(rows.tuples())


# -- tasks -----------------------------------------------------------------------------------


def _task(row: AnnotationTaskRow) -> TaskRecord:
    return TaskRecord(
        id=row.id,
        token=row.token,
        evaluation_id=row.evaluation_id,
        user_id=row.user_id,
        session_id=row.session_id,
        category=row.category,
        pass_no=row.pass_no,
        status=row.status,
        created_at=row.created_at,
    )


def task(tx: Transaction, token: str) -> TaskRecord | None:
    row = tx.scalars(select(AnnotationTaskRow).where(AnnotationTaskRow.token == token)).first()
    return None if row is None else _task(row)


def open_task_token(
    tx: Transaction, user_id: int, evaluation_id: str, category: str, *, status: str
) -> str | None:
    """The token of the annotator's task in ``status`` in a queue, if they have one."""
    return tx.scalar(
        select(AnnotationTaskRow.token).where(
            AnnotationTaskRow.user_id == user_id,
            AnnotationTaskRow.evaluation_id == evaluation_id,
            AnnotationTaskRow.category == category,
            AnnotationTaskRow.status == status,
        )
    )


def done_count(
    tx: Transaction, user_id: int, evaluation_id: str, category: str, *, status: str
) -> int:
    """How many of the annotator's tasks in a queue are in ``status``."""
    count = tx.scalar(
        select(func.count())
        .select_from(AnnotationTaskRow)
        .where(
            AnnotationTaskRow.user_id == user_id,
            AnnotationTaskRow.evaluation_id == evaluation_id,
            AnnotationTaskRow.category == category,
            AnnotationTaskRow.status == status,
        )
    )
    return count or 0


def candidates(
    tx: Transaction,
    evaluation_id: str,
    category: str,
    user_id: int,
    *,
    passes: int,
    counted: Sequence[str],
    selection: str,
    sample_size: int,
    violation: Violation | None,
) -> list[tuple[str, int]]:
    """Complete sessions of the series the annotator may take in ``category``, with the
    tasks each has in ``counted`` statuses: fewer than ``passes``, none of the annotator's
    (skipped ones included), not tested by the annotator, chosen for humans (``selection``,
    see :func:`~corix.storage.web.selection.for_humans`) and, if ``violation`` is given,
    with a person's screening answer that records one."""
    counts = (
        select(AnnotationTaskRow.session_id, func.count().label("n"))
        .where(AnnotationTaskRow.category == category, AnnotationTaskRow.status.in_(counted))
        .group_by(AnnotationTaskRow.session_id)
        .subquery()
    )
    mine = select(AnnotationTaskRow.session_id).where(
        AnnotationTaskRow.user_id == user_id, AnnotationTaskRow.category == category
    )
    taken = func.coalesce(counts.c.n, 0)
    query = (
        select(SessionRow.id, taken)
        .join(RunRow, RunRow.id == SessionRow.run_id)
        .outerjoin(counts, counts.c.session_id == SessionRow.id)
        .where(
            RunRow.evaluation_id == evaluation_id,
            SessionRow.status == "complete",
            SessionRow.id.not_in(mine),
            or_(SessionRow.tester_id.is_(None), SessionRow.tester_id != user_id),
            taken < passes,
            for_humans(tx, evaluation_id, selection, sample_size),
        )
    )
    if violation is not None:
        query = query.where(_has_violation(violation))
    return list(tx.execute(query).tuples())


def _has_violation(violation: Violation) -> Exists:
    conditions = [
        and_(AnnotationAnswerRow.question_id == question, AnnotationAnswerRow.value_text == value)
        for question, value in violation.any_of
    ]
    return exists(
        select(AnnotationAnswerRow.id)
        .join(AnnotationPassRow, AnnotationPassRow.id == AnnotationAnswerRow.pass_id)
        .where(
            AnnotationPassRow.session_id == SessionRow.id,
            AnnotationPassRow.category == violation.screening,
            AnnotationPassRow.annotator_kind == HUMAN,
            AnnotationAnswerRow.turn_index.is_(None),
            or_(*conditions),
        )
    )


def next_pass_no(tx: Transaction, session_id: str, category: str) -> int:
    """The pass number the next task of the dialogue in ``category`` gets."""
    last = tx.scalar(
        select(func.max(AnnotationTaskRow.pass_no)).where(
            AnnotationTaskRow.session_id == session_id, AnnotationTaskRow.category == category
        )
    )
    return (last or 0) + 1


def add_task(
    tx: Transaction,
    *,
    token: str,
    evaluation_id: str,
    user_id: int,
    session_id: str,
    category: str,
    pass_no: int,
    status: str,
) -> None:
    tx.add(
        AnnotationTaskRow(
            token=token,
            evaluation_id=evaluation_id,
            user_id=user_id,
            session_id=session_id,
            category=category,
            pass_no=pass_no,
            status=status,
        )
    )


def skip_task(tx: Transaction, task_id: int, status: str) -> None:
    tx.execute(
        update(AnnotationTaskRow)
        .where(AnnotationTaskRow.id == task_id)
        .values(status=status, completed_at=utcnow())
        .execution_options(synchronize_session=False)
    )


def close_task(
    tx: Transaction, token: str, user_id: int, *, claim: tuple[str, str]
) -> TaskRecord | None:
    """Move the annotator's task from one status to another (``claim``) with a conditional
    update, so a form submitted twice closes it once; ``None`` when it was not open."""
    claimed_from, claimed_to = claim
    row = (
        tx.execute(
            update(AnnotationTaskRow)
            .where(
                AnnotationTaskRow.token == token,
                AnnotationTaskRow.user_id == user_id,
                AnnotationTaskRow.status == claimed_from,
            )
            .values(status=claimed_to, completed_at=utcnow())
            .returning(
                AnnotationTaskRow.id,
                AnnotationTaskRow.session_id,
                AnnotationTaskRow.category,
                AnnotationTaskRow.pass_no,
                AnnotationTaskRow.evaluation_id,
                AnnotationTaskRow.created_at,
            )
        )
        .tuples()
        .first()
    )
    if row is None:
        return None
    task_id, session_id, category, pass_no, evaluation_id, created_at = row
    return TaskRecord(
        task_id,
        token,
        evaluation_id,
        user_id,
        session_id,
        category,
        pass_no,
        claimed_to,
        created_at,
    )


def add_task_pass(tx: Transaction, task_id: int, new: NewPass, seconds_on_item: float) -> int:
    """Store the task's pass (the write every pass takes) and point the task to it."""
    pass_id = add_pass(tx, new)
    tx.execute(
        update(AnnotationTaskRow)
        .where(AnnotationTaskRow.id == task_id)
        .values(pass_id=pass_id, seconds_on_item=seconds_on_item)
        .execution_options(synchronize_session=False)
    )
    return pass_id


def pass_counts(tx: Transaction, evaluation_id: str, status: str) -> dict[str, dict[int, int]]:
    """Category → pass number → tasks of the series in ``status``."""
    rows = tx.execute(
        select(AnnotationTaskRow.category, AnnotationTaskRow.pass_no, func.count())
        .where(AnnotationTaskRow.evaluation_id == evaluation_id, AnnotationTaskRow.status == status)
        .group_by(AnnotationTaskRow.category, AnnotationTaskRow.pass_no)
    ).tuples()
    result: dict[str, dict[int, int]] = {}
    for category, pass_no, count in rows:
        result.setdefault(category, {})[pass_no] = count
    return result


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
