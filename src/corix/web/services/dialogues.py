"""Dialogues as annotators see them: the scenario and the turns, nothing about their origin.

:class:`BlindDialogue` has no field for the application, the level, the source, the
persona or the provenance, so a template cannot show them by mistake. Of the session's
parameters it keeps only those the guardrail depends on.
"""

from __future__ import annotations

from dataclasses import dataclass

from corix.domain import JsonObject, StepView, step_views
from corix.scenarios import resolve_pack
from corix.storage.web import Transaction
from corix.storage.web.dialogues import DialogueTurn, dialogue

STEP_CHARS = 2000
"""A tool call or a tool's result is cut to this many characters on the page."""


@dataclass(frozen=True)
class BlindTurn:
    index: int
    user_text: str
    reply: str | None
    """``None`` when the application failed to answer (its error text is not shown)."""
    steps: tuple[StepView, ...] = ()
    """A tool-using turn's steps, blinded (:func:`corix.domain.step_views`): shown in
    place of the two texts."""


def _blind_turn(turn: DialogueTurn) -> BlindTurn:
    steps = step_views(turn.messages, blinded=True, limit=STEP_CHARS) if turn.messages else []
    return BlindTurn(turn.index, turn.user_text, turn.reply, tuple(steps))


@dataclass(frozen=True)
class BlindDialogue:
    scenario: str
    context: JsonObject
    """The session parameters the scenario's guardrail depends on (e.g. the episode seen)."""
    turns: list[BlindTurn]


def blind_dialogue(tx: Transaction, session_id: str) -> BlindDialogue:
    stored = dialogue(tx, session_id)
    if stored is None:
        raise LookupError(f"no session '{session_id}'")
    return BlindDialogue(
        scenario=stored.scenario,
        context=resolve_pack(stored.scenario).packet.guardrail_context(stored.parameters),
        turns=[_blind_turn(t) for t in stored.turns],
    )
