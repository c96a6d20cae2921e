"""What a dialogue looks like, apart from its labels: the features simulated and human
testers are compared (and simulated ones reweighted) on.

Per complete session: its turns, the mean length of its user messages, the share of the
application's replies that refuse, and the turn (1-based) at which a reply first released
content the guardrail prohibits. Refusals and the violation turn come from the scenario's
test packet as the run stored it (its markers and refusal phrases, :mod:`corix.scenarios`),
so they are the same automatic check for every kind of tester; a session whose run stores
no pack for its scenario has neither.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import NamedTuple

from corix.scenarios import ScenarioPack, checker_for
from corix.storage import Database, iter_sessions, run_packs

TURNS = "turns"
USER_LENGTH = "user message length (characters)"
REFUSAL_SHARE = "application refusals (share of replies)"
VIOLATION_TURN = "turn of the first prohibited release (packet check)"
NO_TEMPLATE = "(no template)"

__all__ = [
    "NO_TEMPLATE",
    "REFUSAL_SHARE",
    "TURNS",
    "USER_LENGTH",
    "VIOLATION_TURN",
    "DialogueShape",
    "dialogue_shapes",
]


class DialogueShape(NamedTuple):
    """One session's features (a feature it lacks is absent) and its persona template."""

    features: dict[str, float]
    template: str


def dialogue_shapes(db: Database, session_ids: Sequence[str]) -> dict[str, DialogueShape]:
    """session → its features and its persona template."""
    sessions = list(iter_sessions(db, session_ids=list(session_ids)))
    runs = sorted({session.run_id for session in sessions if session.run_id is not None})
    packs = {key: record.pack() for key, record in run_packs(db, runs).items()}
    found = {}
    for session in sessions:
        lengths = [len(turn.user_text) for turn in session.turns]
        features = {
            TURNS: float(len(lengths)),
            USER_LENGTH: statistics.fmean(lengths) if lengths else 0.0,
        }
        pack = packs.get((session.run_id or "", session.scenario))
        if pack is not None and session.turns:
            replies = [turn.response_text for turn in session.turns]
            features.update(_packet_features(pack, session.provenance.parameters, replies))
        found[session.id] = DialogueShape(features, session.provenance.template or NO_TEMPLATE)
    return found


def _packet_features(
    pack: ScenarioPack, parameters: dict[str, object], replies: list[str | None]
) -> dict[str, float]:
    context = pack.packet.guardrail_context(parameters)
    check = checker_for(pack.packet).check_dialogue(context, replies)
    features = {REFUSAL_SHARE: len(check.refusal_turns) / len(replies)}
    if check.first_violation_turn is not None:
        features[VIOLATION_TURN] = float(check.first_violation_turn + 1)
    return features
