"""A database that stopped taking writes, told apart from one record it refused.

A full disk, a read-only or locked database or a lost server fails every write alike:
retrying record by record would only print thousands of refusals while the run goes on
calling models. These failures stop the work instead (:class:`StorageUnavailable`); a
record the database refuses on its own (a constraint, a bad value) is still isolated.
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, InternalError, OperationalError

from corix.errors import CorixError

__all__ = ["StorageUnavailable", "storage_trouble"]

_READ_ONLY_TRANSACTION = "25006"
"""PostgreSQL's SQLSTATE for a write in a read-only transaction (an InternalError)."""


class StorageUnavailable(CorixError):
    """The database stopped taking writes; the message is the cause, in words."""


def storage_trouble(exc: BaseException) -> str | None:
    """The cause in words when ``exc`` (or one inside an exception group) says the database
    as a whole takes no writes (full, read-only, locked, gone); ``None`` otherwise."""
    if isinstance(exc, BaseExceptionGroup):
        causes = [cause for inner in exc.exceptions if (cause := storage_trouble(inner))]
        return causes[0] if causes else None
    if isinstance(exc, StorageUnavailable):
        return str(exc)
    if isinstance(exc, InternalError):
        if getattr(exc.orig, "sqlstate", None) != _READ_ONLY_TRANSACTION:
            return None
    elif not isinstance(exc, OperationalError):
        return None
    return _first_line(exc)


def _first_line(exc: DBAPIError) -> str:
    lines = str(exc.orig).strip().splitlines()
    return lines[0][:300] if lines else type(exc.orig).__name__
