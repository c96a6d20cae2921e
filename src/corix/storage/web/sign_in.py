"""Counting sign-in attempts per subject (an account, an address), shared by every process.

The rules (how many failures, how long to wait) belong to the caller; this module only
reads and writes a subject's count atomically: the row is locked (created if missing)
before it is read, so concurrent attempts on any process are counted one after another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, update
from sqlalchemy.dialects import postgresql, sqlite

from corix.storage.clock import as_utc
from corix.storage.database import Database
from corix.storage.orm_web import SignInThrottleRow
from corix.storage.transactions import Transaction, transaction

__all__ = ["Failures", "count_attempt", "settle"]


@dataclass(frozen=True, slots=True)
class Failures:
    """A subject's attempts counted in the current window, and when the last one started."""

    count: int
    last_at: datetime | None


def count_attempt(
    db: Database,
    subject: str,
    *,
    now: datetime,
    window: timedelta,
    wait_for: Callable[[Failures], float],
) -> float:
    """Atomically: ask ``wait_for`` how long the subject must still wait given its
    failures in the window; when nothing (≤ 0), count this attempt. Returns the wait."""
    with transaction(db) as tx:
        row = _locked(tx, subject, now)
        if as_utc(row.first_at) <= now - window:
            row.failures, row.first_at = 0, now
        wait = wait_for(Failures(row.failures, as_utc(row.last_at) if row.failures else None))
        if wait <= 0:
            row.failures += 1
            row.last_at = now
        return wait


def settle(db: Database, *, forget: str, discount: str) -> None:
    """In one unit of work: forget the failures of ``forget`` (an account whose password was
    right) and take one attempt off ``discount``'s count (it was no failure)."""
    with transaction(db) as tx:
        tx.execute(delete(SignInThrottleRow).where(SignInThrottleRow.subject == forget))
        tx.execute(
            update(SignInThrottleRow)
            .where(SignInThrottleRow.subject == discount, SignInThrottleRow.failures > 0)
            .values(failures=SignInThrottleRow.failures - 1)
            .execution_options(synchronize_session=False)
        )


def _locked(tx: Transaction, subject: str, now: datetime) -> SignInThrottleRow:
    dialect = tx.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    tx.execute(
        insert(SignInThrottleRow)
        .values(subject=subject, failures=0, first_at=now, last_at=now)
        .on_conflict_do_nothing(index_elements=["subject"])
    )
    # A no-op write takes the row lock on PostgreSQL and the write lock on SQLite before
    # the row is read, so two processes never both read the count before either writes.
    tx.execute(
        update(SignInThrottleRow)
        .where(SignInThrottleRow.subject == subject)
        .values(failures=SignInThrottleRow.failures)
        .execution_options(synchronize_session=False)
    )
    row = tx.get(SignInThrottleRow, subject, populate_existing=True)
    assert row is not None  # inserted above if missing
    return row
