"""A session's dialogue as stored: its turns, read by every page that shows a dialogue.

The one query for a session's turns lives here; testers' chats, annotators' blinded views
and the replay of a lost dialogue all read it. A tester's turn is written here too, one at
once, through the same path as a run's group-committed turns
(:func:`~corix.storage.sessions.add_turns`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from corix.domain import JsonObject, Message, TurnRecord
from corix.storage.database import Database
from corix.storage.orm import SessionRow, TurnRow
from corix.storage.sessions import NewTurn, add_turns, messages_from_column
from corix.storage.transactions import Transaction, transaction

__all__ = [
    "DialogueTurn",
    "StoredDialogue",
    "dialogue",
    "store_turn",
    "turn_at",
    "turn_count",
    "turns",
]


@dataclass(frozen=True, slots=True)
class DialogueTurn:
    index: int
    user_text: str
    reply: str | None
    """``None`` when the application failed to answer (its error text stays in storage)."""
    meta: JsonObject
    messages: tuple[Message, ...] | None = None
    """Every message of the turn, when it holds more than its two texts (tool calls and
    results): render them with :func:`corix.domain.step_views`."""


@dataclass(frozen=True, slots=True)
class StoredDialogue:
    scenario: str
    parameters: JsonObject
    """The session's parameters (its provenance), e.g. the episode a tester has seen."""
    turns: list[DialogueTurn]


_COLUMNS = (
    TurnRow.idx,
    TurnRow.user_text,
    TurnRow.response_text,
    TurnRow.error,
    TurnRow.meta,
    TurnRow.messages,
)


def _turn(
    idx: int, text: str, reply: str | None, error: str | None, meta: Any, messages: Any
) -> DialogueTurn:
    reply = reply if error is None else None
    return DialogueTurn(idx, text, reply, dict(meta or {}), messages_from_column(messages))


def turns(tx: Transaction, session_id: str) -> list[DialogueTurn]:
    """The session's turns in order."""
    rows = tx.execute(
        select(*_COLUMNS).where(TurnRow.session_id == session_id).order_by(TurnRow.idx)
    )
    return [_turn(*row) for row in rows.tuples()]


def turn_at(tx: Transaction, session_id: str, index: int) -> DialogueTurn | None:
    found = (
        tx.execute(select(*_COLUMNS).where(TurnRow.session_id == session_id, TurnRow.idx == index))
        .tuples()
        .first()
    )
    return None if found is None else _turn(*found)


def turn_count(tx: Transaction, session_id: str) -> int:
    count = tx.scalar(
        select(func.count()).select_from(TurnRow).where(TurnRow.session_id == session_id)
    )
    return count or 0


def dialogue(tx: Transaction, session_id: str) -> StoredDialogue | None:
    """The session's scenario, parameters and turns; ``None`` when there is no such session."""
    session = tx.get(SessionRow, session_id)
    if session is None:
        return None
    parameters = session.provenance.get("parameters") or {}
    return StoredDialogue(session.scenario, dict(parameters), turns(tx, session_id))


def store_turn(db: Database, session_id: str, turn: TurnRecord) -> None:
    """Store ``turn`` of ``session_id`` now, for a writer that cannot wait for a group commit;
    :class:`~corix.storage.web.Duplicate` means another request took its index first."""
    with transaction(db) as tx:
        add_turns(tx, [NewTurn(session_id, turn)])
