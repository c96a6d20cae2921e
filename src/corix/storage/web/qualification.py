"""Qualification attempts and the gold dialogues drawn for each, kept server-side."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, update

from corix.domain import JsonObject
from corix.storage.orm_web import QualificationAttemptRow, QualificationDrawRow
from corix.storage.transactions import Transaction, affected_rows

__all__ = [
    "AttemptRecord",
    "AttemptTally",
    "DrawRecord",
    "NewAttempt",
    "add_attempt",
    "add_draw",
    "attempt_tally",
    "attempts",
    "draws",
    "earlier_draws",
    "open_draw",
]


@dataclass(frozen=True, slots=True)
class AttemptTally:
    """A person's attempts at one version of the test."""

    attempts: int
    best_score: float | None
    passed: bool
    last_at: datetime | None


@dataclass(frozen=True, slots=True)
class DrawRecord:
    id: int
    dialogue_ids: list[str]
    attempt_id: int | None
    """The attempt that used the draw (``None`` while it is open)."""


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    id: int
    test_version: str
    score: float
    passed: bool
    answers: JsonObject
    created_at: datetime


@dataclass(frozen=True, slots=True)
class NewAttempt:
    user_id: int
    test_version: str
    score: float
    pass_mark: float
    passed: bool
    answers: JsonObject
    at: datetime


def attempt_tally(tx: Transaction, user_id: int, test_version: str) -> AttemptTally:
    mine = (
        QualificationAttemptRow.user_id == user_id,
        QualificationAttemptRow.test_version == test_version,
    )
    attempts, best, passed, last = tx.execute(
        select(
            func.count(),
            func.max(QualificationAttemptRow.score),
            func.count().filter(QualificationAttemptRow.passed.is_(True)),
            func.max(QualificationAttemptRow.created_at),
        ).where(*mine)
    ).one()
    return AttemptTally(attempts or 0, best, bool(passed), last)


def open_draw(tx: Transaction, user_id: int, test_version: str) -> DrawRecord | None:
    """The person's draw that no attempt has used yet, if there is one."""
    row = tx.scalars(
        select(QualificationDrawRow).where(
            QualificationDrawRow.user_id == user_id,
            QualificationDrawRow.test_version == test_version,
            QualificationDrawRow.attempt_id.is_(None),
        )
    ).first()
    return None if row is None else DrawRecord(row.id, list(row.dialogue_ids), row.attempt_id)


def earlier_draws(tx: Transaction, user_id: int, test_version: str) -> list[list[str]]:
    """The dialogue ids of each of the person's draws, oldest first."""
    rows = tx.scalars(
        select(QualificationDrawRow.dialogue_ids)
        .where(
            QualificationDrawRow.user_id == user_id,
            QualificationDrawRow.test_version == test_version,
        )
        .order_by(QualificationDrawRow.id)
    )
    return [list(ids) for ids in rows]


def attempts(tx: Transaction, user_id: int) -> list[AttemptRecord]:
    """The person's attempts at every version of the test, oldest first."""
    rows = tx.scalars(
        select(QualificationAttemptRow)
        .where(QualificationAttemptRow.user_id == user_id)
        .order_by(QualificationAttemptRow.id)
    )
    return [
        AttemptRecord(
            row.id, row.test_version, row.score, row.passed, dict(row.answers), row.created_at
        )
        for row in rows
    ]


def draws(tx: Transaction, user_id: int) -> list[DrawRecord]:
    """The person's draws for every version of the test, oldest first."""
    rows = tx.scalars(
        select(QualificationDrawRow)
        .where(QualificationDrawRow.user_id == user_id)
        .order_by(QualificationDrawRow.id)
    )
    return [DrawRecord(row.id, list(row.dialogue_ids), row.attempt_id) for row in rows]


def add_draw(tx: Transaction, user_id: int, test_version: str, dialogue_ids: Sequence[str]) -> None:
    tx.add(
        QualificationDrawRow(
            user_id=user_id, test_version=test_version, dialogue_ids=list(dialogue_ids)
        )
    )


def add_attempt(tx: Transaction, draw_id: int, attempt: NewAttempt) -> bool:
    """Record the attempt and mark its draw used; ``False`` (and nothing to keep: the
    caller rolls back) when another submission used the draw first."""
    row = QualificationAttemptRow(
        user_id=attempt.user_id,
        test_version=attempt.test_version,
        score=attempt.score,
        pass_mark=attempt.pass_mark,
        passed=attempt.passed,
        answers=attempt.answers,
        created_at=attempt.at,
    )
    tx.add(row)
    tx.flush()
    claimed = tx.execute(
        update(QualificationDrawRow)
        .where(QualificationDrawRow.id == draw_id, QualificationDrawRow.attempt_id.is_(None))
        .values(attempt_id=row.id)
        .execution_options(synchronize_session=False)
    )
    return affected_rows(claimed) == 1
