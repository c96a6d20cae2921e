"""Time helpers that read stored timestamps the same way on SQLite and PostgreSQL."""

from corix.storage import as_utc, is_past, utcnow

__all__ = ["as_utc", "is_past", "utcnow"]
