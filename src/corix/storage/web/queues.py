"""Annotators' queues and tasks: a dialogue handed to one annotator for one category is a
pass in the making.

A person's pass is stored by :func:`corix.storage.annotations.add_pass`, the same write as
``corix annotate`` and imported labels; the task only points to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, delete, exists, func, insert, or_, select, update
from sqlalchemy.sql.expression import Exists

from corix.storage.annotations import add_pass
from corix.storage.clock import utcnow
from corix.storage.database import Database
from corix.storage.orm import (
    AnnotationAnswerRow,
    AnnotationPassRow,
    EvaluationRow,
    RunRow,
    SessionRow,
)
from corix.storage.orm_web import AnnotationTaskRow, AnnotatorQueueRow, ExpiredClaimRow, UserRow
from corix.storage.store_records import NewPass
from corix.storage.transactions import Transaction, affected_rows, transaction
from corix.storage.web.passes import HUMAN
from corix.storage.web.selection import for_humans

__all__ = [
    "ExpiredClaim",
    "QueueRecord",
    "TaskRecord",
    "Violation",
    "add_queues",
    "add_task",
    "add_task_pass",
    "candidates",
    "close_task",
    "done_count",
    "drop_stale_claims",
    "expired_claim",
    "forget_expired_claim",
    "next_pass_no",
    "open_claims",
    "open_task_token",
    "pass_counts",
    "queue",
    "queue_categories",
    "queue_id",
    "queues_of",
    "queues_of_series",
    "renew_claim",
    "skip_task",
    "task",
    "task_on",
]


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
class ExpiredClaim:
    """A claim that ran out and went back to the queue: whose it was, on what, since when."""

    token: str
    evaluation_id: str
    user_id: int
    session_id: str
    category: str
    claimed_at: datetime


@dataclass(frozen=True, slots=True)
class Violation:
    """When a dialogue has a violation: a person's dialogue-level answer in the screening
    category equals one of ``any_of`` (question id, value)."""

    screening: str
    any_of: tuple[tuple[str, str], ...]


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
    claims: tuple[str, datetime],
    selection: str,
    sample_size: int,
    violation: Violation | None,
) -> list[tuple[str, int]]:
    """Complete sessions of the series the annotator may take in ``category``, with the
    tasks each has in ``counted`` statuses or claimed (``claims``: the status of a claim and
    the moment before which a claim has expired): fewer than ``passes``, none of the annotator's
    (skipped ones included), not tested by the annotator, chosen for humans (``selection``,
    see :func:`~corix.storage.web.selection.for_humans`) and, if ``violation`` is given,
    with a person's screening answer that records one."""
    claimed, expired_before = claims
    counts = (
        select(AnnotationTaskRow.session_id, func.count().label("n"))
        .where(
            AnnotationTaskRow.category == category,
            or_(
                AnnotationTaskRow.status.in_(counted),
                and_(
                    AnnotationTaskRow.status == claimed,
                    AnnotationTaskRow.created_at > expired_before,
                ),
            ),
        )
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
    """The pass number the next task of the dialogue in ``category`` gets: the lowest free
    one, so a claim that expired leaves no gap."""
    taken = set(
        tx.scalars(
            select(AnnotationTaskRow.pass_no).where(
                AnnotationTaskRow.session_id == session_id, AnnotationTaskRow.category == category
            )
        )
    )
    return next(n for n in range(1, len(taken) + 2) if n not in taken)


def drop_stale_claims(
    tx: Transaction, evaluation_id: str, category: str, *, status: str, before: datetime
) -> int:
    """Take the series' claims (tasks in ``status``) in ``category`` made before ``before``
    back into the queue: each is remembered by its token (:func:`expired_claim`), then its
    task deleted. Returns how many."""
    stale = (
        AnnotationTaskRow.evaluation_id == evaluation_id,
        AnnotationTaskRow.category == category,
        AnnotationTaskRow.status == status,
        AnnotationTaskRow.created_at <= before,
        AnnotationTaskRow.pass_id.is_(None),
    )
    remembered = select(
        AnnotationTaskRow.token,
        AnnotationTaskRow.evaluation_id,
        AnnotationTaskRow.user_id,
        AnnotationTaskRow.session_id,
        AnnotationTaskRow.category,
        AnnotationTaskRow.created_at,
    ).where(*stale)
    columns = ["token", "evaluation_id", "user_id", "session_id", "category", "claimed_at"]
    tx.execute(insert(ExpiredClaimRow).from_select(columns, remembered))
    result = tx.execute(
        delete(AnnotationTaskRow).where(*stale).execution_options(synchronize_session=False)
    )
    return affected_rows(result)


def expired_claim(tx: Transaction, token: str) -> ExpiredClaim | None:
    """The claim ``token`` named before it ran out and went back to the queue, if it did."""
    row = tx.scalars(select(ExpiredClaimRow).where(ExpiredClaimRow.token == token)).first()
    if row is None:
        return None
    return ExpiredClaim(
        row.token, row.evaluation_id, row.user_id, row.session_id, row.category, row.claimed_at
    )


def forget_expired_claim(tx: Transaction, token: str) -> None:
    tx.execute(delete(ExpiredClaimRow).where(ExpiredClaimRow.token == token))


def task_on(tx: Transaction, user_id: int, session_id: str, category: str) -> TaskRecord | None:
    """The annotator's task on a dialogue in ``category``, whatever its status."""
    row = tx.scalars(
        select(AnnotationTaskRow).where(
            AnnotationTaskRow.user_id == user_id,
            AnnotationTaskRow.session_id == session_id,
            AnnotationTaskRow.category == category,
        )
    ).first()
    return None if row is None else _task(row)


def renew_claim(tx: Transaction, task_id: int, *, status: str, at: datetime) -> None:
    """Start a claim (a task in ``status``) afresh at ``at``, if it is still there."""
    tx.execute(
        update(AnnotationTaskRow)
        .where(AnnotationTaskRow.id == task_id, AnnotationTaskRow.status == status)
        .values(created_at=at)
        .execution_options(synchronize_session=False)
    )


def open_claims(
    tx: Transaction, evaluation_id: str, *, status: str, before: datetime
) -> tuple[int, int]:
    """(claims in ``status`` of the series, how many of them were made before ``before``)."""
    row = tx.execute(
        select(
            func.count(),
            func.count().filter(AnnotationTaskRow.created_at <= before),
        ).where(
            AnnotationTaskRow.evaluation_id == evaluation_id, AnnotationTaskRow.status == status
        )
    ).one()
    return int(row[0]), int(row[1])


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
    created_at: datetime,
) -> None:
    """Hand a dialogue to an annotator; ``created_at`` is when they claimed it (claims age
    from it)."""
    tx.add(
        AnnotationTaskRow(
            token=token,
            evaluation_id=evaluation_id,
            user_id=user_id,
            session_id=session_id,
            category=category,
            pass_no=pass_no,
            status=status,
            created_at=created_at,
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
