"""Dialogues as annotators see them: the scenario and the turns, nothing about their origin.

:class:`BlindDialogue` has no field for the application, the level, the source, the
persona or the provenance, so a template cannot show them by mistake. Of the session's
parameters it keeps only those the guardrail depends on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from corix.scenarios import resolve_pack
from corix.storage.orm import SessionRow, TurnRow
from corix.web.services.briefings import guardrail_context


@dataclass(frozen=True)
class BlindTurn:
    index: int
    user_text: str
    reply: str | None
    """``None`` when the application failed to answer (its error text is not shown)."""


@dataclass(frozen=True)
class BlindDialogue:
    scenario: str
    context: dict[str, Any]
    """The session parameters the scenario's guardrail depends on (e.g. the episode seen)."""
    turns: list[BlindTurn]


def blind_dialogue(s: Session, session_id: str) -> BlindDialogue:
    session = s.get(SessionRow, session_id)
    if session is None:
        raise LookupError(f"no session '{session_id}'")
    turns = s.scalars(select(TurnRow).where(TurnRow.session_id == session_id).order_by(TurnRow.idx))
    parameters = session.provenance.get("parameters") or {}
    return BlindDialogue(
        scenario=session.scenario,
        context=guardrail_context(resolve_pack(session.scenario), parameters),
        turns=[
            BlindTurn(t.idx, t.user_text, t.response_text if t.error is None else None)
            for t in turns
        ],
    )
