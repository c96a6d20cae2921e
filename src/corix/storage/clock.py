"""Time as corix stores it: UTC, read back the same way on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["as_utc", "is_past", "utcnow"]


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything corix stores is UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def is_past(moment: datetime) -> bool:
    return as_utc(moment) <= utcnow()
