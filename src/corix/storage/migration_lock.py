"""One process at a time brings a database's schema up to date.

Any number of commands may open a new database at once (two ``corix run`` in CI, a
server and a worker starting together); without a lock each sees no schema and all but
one fail creating the same tables. PostgreSQL takes a session advisory lock on the
migrating connection; SQLite, which has no such lock, an exclusive ``flock`` on a file
beside the database (SQLite's own locks are POSIX record locks, which ``flock`` does not
touch). The processes that wait find the schema current and have nothing to do.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, text

__all__ = ["migration_lock"]

# Any constant, the same in every corix process: the advisory lock's key ("corix" in ASCII).
_ADVISORY_KEY = 0x636F726978
_POLL_S = 0.05
_PATIENCE_S = 600.0
"""How long a process waits for another's migration before giving up (a migration of a
large database can take minutes; a stuck one should not hang commands forever)."""


@contextmanager
def migration_lock(connection: Connection) -> Iterator[None]:
    """Hold the database's migration lock for the block (no-op for an in-memory SQLite)."""
    if connection.dialect.name == "postgresql":
        with _advisory_lock(connection):
            yield
        return
    database = connection.engine.url.database
    if connection.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    with Path(f"{database}-migrate.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _advisory_lock(connection: Connection) -> Iterator[None]:
    # Polled rather than waited on: the connection's lock_timeout (a few seconds, right for
    # rows) would cut a wait for another process's whole migration short.
    deadline = time.monotonic() + _PATIENCE_S
    try_lock = text("SELECT pg_try_advisory_lock(:key)").bindparams(key=_ADVISORY_KEY)
    while not connection.execute(try_lock).scalar_one():
        connection.commit()
        if time.monotonic() > deadline:
            raise TimeoutError("another process has been migrating this database for too long")
        time.sleep(_POLL_S)
    connection.commit()
    try:
        yield
    finally:
        connection.execute(text("SELECT pg_advisory_unlock(:key)").bindparams(key=_ADVISORY_KEY))
        connection.commit()
