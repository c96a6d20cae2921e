"""One process per run: a lease on the run's row, kept alive by a heartbeat.

The process that runs, resumes or annotates a run holds its lease: ``lease_holder`` names
it (what it does, its host and pid) and ``lease_heartbeat_at`` says when it last showed it
is alive (every :data:`HEARTBEAT_S` seconds, from a thread, so a busy event loop does not
miss a beat). A second process finds the lease held and is refused with the holder's
name. A lease is *stale* when its holder died: no heartbeat for :data:`STALE_AFTER_S`
seconds, or at once when the holder's pid on this very host is gone (``kill -9``). A stale
lease is taken over; a run left ``running`` under one shows as ``stale``.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, update
from sqlalchemy.exc import SQLAlchemyError

from corix.errors import CorixError
from corix.storage.clock import as_utc, utcnow
from corix.storage.database import Database
from corix.storage.orm import RunRow
from corix.storage.store_records import RunRecord
from corix.storage.transactions import NotFoundError

__all__ = [
    "HEARTBEAT_S",
    "STALE_AFTER_S",
    "RunHeld",
    "holding_run",
    "is_stale",
    "shown_status",
]

logger = logging.getLogger(__name__)

HEARTBEAT_S = 10.0
STALE_AFTER_S = 45.0
"""More than four missed heartbeats: the holder is gone (or its machine is)."""
_HOLDER = re.compile(r" on (?P<host>\S+) \(pid (?P<pid>\d+),")


class RunHeld(CorixError):
    """Another live process holds the run."""

    def __init__(self, run_id: str, holder: str) -> None:
        super().__init__(
            f"run '{run_id}' is held by {holder}; wait for it to end, or stop it "
            f"(`corix runs cancel {run_id}` stops it for good)"
        )
        self.holder = holder


def is_stale(
    holder: str | None, heartbeat_at: datetime | None, now: datetime | None = None
) -> bool:
    """Whether a lease no longer protects anything: nobody holds it, or its holder died."""
    if holder is None or heartbeat_at is None:
        return True
    if utcnow() - as_utc(heartbeat_at) > timedelta(seconds=STALE_AFTER_S):
        return True
    found = _HOLDER.search(holder)
    return (
        found is not None
        and found["host"] == socket.gethostname()
        and not _alive(int(found["pid"]))
    )


def shown_status(run: RunRecord) -> str:
    """The run's status as listed: ``stale`` for a ``running`` run whose holder died. A web
    evaluation's run of human sessions runs with no process holding it, so it never is."""
    human = run.plan.get("kind") == "human"
    if run.status == "running" and not human and is_stale(run.lease_holder, run.lease_heartbeat_at):
        return "stale"
    return run.status


@contextmanager
def holding_run(db: Database, run_id: str, what: str) -> Iterator[str]:
    """Hold ``run_id``'s lease while the block runs (``what``: e.g. ``corix run``); raise
    :class:`RunHeld` naming the holder when a live process holds it. Yields the holder."""
    holder = f"{what} on {socket.gethostname()} (pid {os.getpid()}, {secrets.token_hex(3)})"
    _take(db, run_id, holder)
    stop = threading.Event()
    beat = threading.Thread(
        target=_heartbeat, args=(db, run_id, holder, stop), name="corix-lease", daemon=True
    )
    beat.start()
    try:
        yield holder
    finally:
        stop.set()
        beat.join()
        _release(db, run_id, holder)


def _take(db: Database, run_id: str, holder: str) -> None:
    with db.session() as s:
        row = s.get(RunRow, run_id)
        if row is None:
            raise NotFoundError(f"no run '{run_id}'")
        seen = row.lease_holder
        if seen is not None and not is_stale(seen, row.lease_heartbeat_at):
            raise RunHeld(run_id, seen)
        # Compare and set: of two processes taking a free lease at once, one wins.
        taken = cast(
            CursorResult[Any],
            s.execute(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.lease_holder.is_not_distinct_from(seen))
                .values(lease_holder=holder, lease_heartbeat_at=utcnow())
                .execution_options(synchronize_session=False)
            ),
        )
    if taken.rowcount != 1:
        with db.session() as s:
            row = s.get(RunRow, run_id)
            raise RunHeld(run_id, (row.lease_holder if row else None) or "another process")


def _heartbeat(db: Database, run_id: str, holder: str, stop: threading.Event) -> None:
    while not stop.wait(HEARTBEAT_S):
        try:
            with db.session() as s:
                kept = cast(
                    CursorResult[Any],
                    s.execute(
                        update(RunRow)
                        .where(RunRow.id == run_id, RunRow.lease_holder == holder)
                        .values(lease_heartbeat_at=utcnow())
                        .execution_options(synchronize_session=False)
                    ),
                )
            if kept.rowcount != 1:
                logger.warning("run %s: its lease was taken over by another process", run_id)
                return
        except SQLAlchemyError as exc:  # the database's own trouble stops the run elsewhere
            logger.info("run %s: heartbeat failed: %s", run_id, exc)


def _release(db: Database, run_id: str, holder: str) -> None:
    try:
        with db.session() as s:
            s.execute(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.lease_holder == holder)
                .values(lease_holder=None, lease_heartbeat_at=None)
                .execution_options(synchronize_session=False)
            )
    except SQLAlchemyError as exc:  # unreleased, it goes stale when this process ends
        logger.info("run %s: could not release its lease: %s", run_id, exc)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
