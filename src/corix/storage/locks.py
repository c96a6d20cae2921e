"""Named locks between processes that share a database, released when their holder dies.

PostgreSQL: a session-level advisory lock on a connection of its own, which the server
releases when the connection closes, a killed process's included. SQLite: a POSIX record
lock on one byte (chosen by the name) of a file beside the database, ``<db>.locks``,
which the kernel releases with the process; record locks do not exclude their own
process, so a set of the names held here does that. Locks are taken without waiting: the
caller learns at once that someone else holds one.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import text

from corix.storage.database import Database

__all__ = ["LockHeld", "exclusive"]


class LockHeld(Exception):
    """Another process (or task) holds the lock."""


_held_here: set[str] = set()
_held_here_guard = threading.Lock()


@contextmanager
def exclusive(db: Database, name: str) -> Iterator[None]:
    """Hold the lock ``name`` on ``db`` while the block runs; raise :class:`LockHeld` if
    it is taken."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).digest()
    if db.dialect == "postgresql":
        with _advisory(db, int.from_bytes(digest[:8], "big", signed=True)):
            yield
        return
    with _process_local(f"{db.url}\n{name}"):
        database = db.engine.url.database
        if not database or database == ":memory:":
            yield
            return
        offset = int.from_bytes(digest[:5], "big")
        with _record_lock(Path(f"{database}.locks"), offset):
            yield


@contextmanager
def _advisory(db: Database, key: int) -> Iterator[None]:
    with db.engine.connect() as connection:
        taken = connection.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": key})
        if not taken.scalar():
            raise LockHeld
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
            connection.commit()


@contextmanager
def _record_lock(path: Path, offset: int) -> Iterator[None]:
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
        except OSError:  # EAGAIN or EACCES: another process holds the byte
            raise LockHeld from None
        yield
    finally:
        os.close(descriptor)  # closing releases the lock; the empty file stays


@contextmanager
def _process_local(key: str) -> Iterator[None]:
    with _held_here_guard:
        if key in _held_here:
            raise LockHeld
        _held_here.add(key)
    try:
        yield
    finally:
        with _held_here_guard:
            _held_here.discard(key)
