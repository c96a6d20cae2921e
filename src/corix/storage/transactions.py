"""One unit of work for the stores, and the refusals stores raise: a duplicate, a missing id."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import CursorResult, Result, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from corix.errors import CorixError
from corix.storage.database import Database
from corix.storage.orm import EvaluationRow

__all__ = ["Duplicate", "NotFoundError", "Transaction", "WriteGate", "lock_series", "transaction"]

Transaction = Session
"""An open unit of work; callers hand it to store functions and never query it themselves."""


class NotFoundError(CorixError):
    """A run, session or application id that is not in the database."""


class Duplicate(CorixError):
    """A write the database refused because a unique key is taken (a name, a token, a race)."""


@contextmanager
def transaction(db: Database) -> Iterator[Transaction]:
    """A unit of work: committed on success, rolled back on any error; a duplicate key
    (however late the database notices it) comes out as :class:`Duplicate`."""
    try:
        with db.session() as s:
            yield s
    except IntegrityError as exc:
        raise Duplicate(str(exc.orig)) from exc


def affected_rows(result: Result[Any]) -> int:
    """Rows changed by an UPDATE or DELETE: how conditional updates tell who won a race."""
    if not isinstance(result, CursorResult):
        raise TypeError("affected_rows needs the result of an UPDATE or DELETE")
    return result.rowcount


def lock_series(tx: Transaction, evaluation_id: str) -> None:
    """Serialize a check-then-insert within one evaluation series.

    A no-op update of the series' row (of a non-key column, so rows that merely reference
    the series are not blocked), issued before anything is read: it takes the row lock on
    PostgreSQL, held until commit, so later reads see the previous holder's writes; and the
    write lock on SQLite, whose snapshot would otherwise be stale when the insert comes.
    """
    tx.execute(
        update(EvaluationRow)
        .where(EvaluationRow.id == evaluation_id)
        .values(description=EvaluationRow.description)
        .execution_options(synchronize_session=False)
    )


class WriteGate:
    """Lets one thread of this process write to SQLite at a time; a no-op on PostgreSQL.

    SQLite has one writer at a time. Threads that find the write lock taken wait in SQLite's
    busy handler, which sleeps in growing steps of up to 100 ms; queueing them on a Python
    lock instead wakes each one the moment the previous write commits.
    """

    def __init__(self, db: Database) -> None:
        self._lock = threading.Lock() if db.dialect == "sqlite" else None

    @contextmanager
    def __call__(self) -> Iterator[None]:
        if self._lock is None:
            yield
            return
        with self._lock:
            yield
