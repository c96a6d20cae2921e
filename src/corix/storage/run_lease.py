"""One process per run: a lease on the run's row, kept alive by a heartbeat.

The process that runs, resumes or annotates a run holds its lease: ``lease_holder`` names
it (what it does, its host and pid) and ``lease_heartbeat_at`` says when it last showed it
is alive (every :data:`HEARTBEAT_S` seconds, from a thread, so a busy event loop does not
miss a beat). A second process finds the lease held and is refused with the holder's
name. A lease is *stale* when its holder died: no heartbeat for :data:`STALE_AFTER_S`
seconds, or at once when the holder's pid is gone on this very host, boot and pid namespace
(``kill -9``; a pid alone would name another process in another container). A stale lease is
taken over; a run left ``running`` under one shows as ``stale``.

A holder that was only paused (SIGSTOP, a laptop lid, a stalled VM) looks dead too, and
may wake after another process took its run over. So leases are *fenced*: each takeover
increments the run's ``lease_epoch``, every write made under a lease checks its epoch in
the same transaction (:func:`check_fence`) and is refused, rolled back, when it is old,
and the heartbeat tells the holder at once (``on_lost``) so it stops calling models. Only
the current holder writes a run's end.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

from sqlalchemy import CursorResult, Table, bindparam, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from corix.domain import HumanRunPlan
from corix.errors import CorixError
from corix.storage.clock import as_utc, utcnow
from corix.storage.database import Database
from corix.storage.orm import RunRow
from corix.storage.store_records import RunRecord
from corix.storage.transactions import NotFoundError

__all__ = [
    "HEARTBEAT_S",
    "STALE_AFTER_S",
    "Lease",
    "LeaseFence",
    "LeaseLost",
    "RunHeld",
    "check_fence",
    "holding_run",
    "is_stale",
    "live_holder",
    "shown_status",
    "stopped_when_taken_over",
]

logger = logging.getLogger(__name__)

HEARTBEAT_S = 10.0
STALE_AFTER_S = 45.0
"""More than four missed heartbeats: the holder is gone (or its machine is)."""
_HOLDER = re.compile(r" on (?P<host>\S+) \(pid (?P<pid>\d+), (?P<machine>[0-9a-f]+:\d+),")


class LeaseLost(CorixError):
    """Another process took the run over: this one's writes are refused, and it stops."""

    def __init__(self, run_id: str, holder: str | None = None) -> None:
        by = f" by {holder}" if holder else ""
        super().__init__(
            f"run '{run_id}' was taken over{by} while this process was paused or cut off; "
            "this process stopped calling models and wrote nothing more (the new holder "
            "finishes the run)"
        )
        self.run_id = run_id


@dataclass(frozen=True)
class LeaseFence:
    """What a write under a lease carries: the run and the lease's epoch (picklable, so a
    Ray worker's writes are fenced as the driver's are)."""

    run_id: str
    epoch: int


@dataclass
class Lease:
    """A held lease: its holder's name, its fence, and whether it was lost since.

    Whoever learns first that the lease was taken over (the heartbeat, or a write the
    database refused) calls :meth:`mark_lost`; what was registered with :meth:`when_lost`
    is told once, from that caller's thread.
    """

    holder: str
    fence: LeaseFence
    lost: LeaseLost | None = None
    _listeners: list[Callable[[LeaseLost], None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def when_lost(self, listener: Callable[[LeaseLost], None]) -> None:
        with self._lock:
            lost = self.lost
            if lost is None:
                self._listeners.append(listener)
        if lost is not None:
            listener(lost)

    def mark_lost(self, lost: LeaseLost) -> None:
        with self._lock:
            if self.lost is not None:
                return
            self.lost = lost
            listeners, self._listeners = self._listeners, []
        logger.info("%s", lost)  # the holder reports it (the CLI: one line, exit 8)
        for listener in listeners:
            listener(lost)


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
        and found["machine"] == machine_identity()
        and not _alive(int(found["pid"]))
    )


@cache
def machine_identity() -> str:
    """This boot of this machine and this pid namespace: where a pid names one process.

    Two containers share a host name yet number their processes apart; a reboot reuses
    pids. Without ``/proc`` (not Linux) the pid check is never trusted alone.
    """
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip().replace("-", "")
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return f"{secrets.token_hex(8)}:0"  # matches no other process's: staleness by time only
    return f"{boot[:16]}:{namespace}"


def live_holder(holder: str | None, heartbeat_at: datetime | None) -> str | None:
    """The process holding a lease, unless nobody does or its holder died."""
    return None if is_stale(holder, heartbeat_at) else holder


def shown_status(run: RunRecord) -> str:
    """The run's status as listed: ``stale`` for a ``running`` run whose holder died. A web
    evaluation's run of human sessions runs with no process holding it, so it never is."""
    human = isinstance(run.plan, HumanRunPlan)
    if run.status == "running" and not human and is_stale(run.lease_holder, run.lease_heartbeat_at):
        return "stale"
    return run.status


@contextmanager
def holding_run(db: Database, run_id: str, what: str) -> Iterator[Lease]:
    """Hold ``run_id``'s lease while the block runs (``what``: e.g. ``corix run``); raise
    :class:`RunHeld` naming the holder when a live process holds it. Yields the lease,
    whose listeners hear (from the heartbeat's thread) when another process took it over."""
    holder = (
        f"{what} on {socket.gethostname()} (pid {os.getpid()}, {machine_identity()}, "
        f"{secrets.token_hex(3)})"
    )
    lease = Lease(holder, LeaseFence(run_id, _take(db, run_id, holder)))
    stop = threading.Event()
    beat = threading.Thread(
        target=_heartbeat, args=(db, lease, stop), name="corix-lease", daemon=True
    )
    beat.start()
    try:
        yield lease
    finally:
        stop.set()
        beat.join()
        _release(db, lease)


T = TypeVar("T")


async def stopped_when_taken_over(lease: Lease, work: Awaitable[T]) -> T:
    """Await ``work``; once ``lease`` is lost, cancel it at once and raise :class:`LeaseLost`
    (a paused holder that wakes must not call another model)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)

    def cancel(_lost: LeaseLost) -> None:
        loop.call_soon_threadsafe(task.cancel)

    lease.when_lost(cancel)
    try:
        return await task
    except asyncio.CancelledError:
        if lease.lost is None:
            raise
        raise lease.lost from None


_RUNS = cast(Table, RunRow.__table__)
# Built once, on the table: every batch a run's writer commits ends with this read, and the
# ORM's select would be built, keyed and compiled for its entity each time. The same SQL.
_LEASE_EPOCH = (
    select(_RUNS.c.lease_epoch)
    .where(_RUNS.c.id == bindparam("fenced_run"))
    .with_for_update(read=True)
)


def check_fence(s: Session, fence: LeaseFence) -> None:
    """Raise :class:`LeaseLost` inside transaction ``s`` when ``fence``'s lease was taken
    over. Call it last, after the transaction's writes: on PostgreSQL it takes a share lock
    on the run's row, so a takeover waits for this commit or this commit sees it; on SQLite
    the writes already hold the database's one write lock."""
    epoch = s.execute(_LEASE_EPOCH, {"fenced_run": fence.run_id}).scalar()
    if epoch != fence.epoch:
        raise LeaseLost(fence.run_id)


def _take(db: Database, run_id: str, holder: str) -> int:
    """Take the lease and return its epoch."""
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
                .values(
                    lease_holder=holder,
                    lease_heartbeat_at=utcnow(),
                    lease_epoch=RunRow.lease_epoch + 1,
                )
                .execution_options(synchronize_session=False)
            ),
        )
        epoch = s.scalar(select(RunRow.lease_epoch).where(RunRow.id == run_id))
    if taken.rowcount != 1:
        with db.session() as s:
            row = s.get(RunRow, run_id)
            raise RunHeld(run_id, (row.lease_holder if row else None) or "another process")
    return int(epoch or 0)


def _heartbeat(db: Database, lease: Lease, stop: threading.Event) -> None:
    run_id = lease.fence.run_id
    while not stop.wait(HEARTBEAT_S):
        try:
            with db.session() as s:
                kept = cast(
                    CursorResult[Any],
                    s.execute(
                        update(RunRow)
                        .where(RunRow.id == run_id, RunRow.lease_epoch == lease.fence.epoch)
                        .values(lease_heartbeat_at=utcnow())
                        .execution_options(synchronize_session=False)
                    ),
                )
                holder = s.scalar(select(RunRow.lease_holder).where(RunRow.id == run_id))
            if kept.rowcount != 1:
                lease.mark_lost(LeaseLost(run_id, holder))
                return
        except SQLAlchemyError as exc:  # the database's own trouble stops the run elsewhere
            logger.info("run %s: heartbeat failed: %s", run_id, exc)


def _release(db: Database, lease: Lease) -> None:
    try:
        with db.session() as s:
            s.execute(
                update(RunRow)
                .where(RunRow.id == lease.fence.run_id, RunRow.lease_epoch == lease.fence.epoch)
                .values(lease_holder=None, lease_heartbeat_at=None)
                .execution_options(synchronize_session=False)
            )
    except SQLAlchemyError as exc:  # unreleased, it goes stale when this process ends
        logger.info("run %s: could not release its lease: %s", lease.fence.run_id, exc)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
