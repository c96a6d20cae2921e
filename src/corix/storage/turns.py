"""One turn stored at once, for writers that cannot wait for a group commit (the web)."""

from __future__ import annotations

from sqlalchemy import insert

from corix.domain import TurnRecord
from corix.storage.database import Database
from corix.storage.orm import TurnRow
from corix.storage.records import turn_columns

__all__ = ["store_turn"]


def store_turn(db: Database, session_id: str, turn: TurnRecord) -> None:
    """Store ``turn`` of ``session_id`` now; an ``IntegrityError`` means its index is taken."""
    with db.session() as s:
        s.execute(insert(TurnRow), [turn_columns(session_id, turn)])
