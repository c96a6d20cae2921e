"""What each session attempted: its persona template (or script) and its exact prompt.

Attacker-style rates group a run's sessions by what was tried: the same persona template
(or model-testing script) filled with different parameters, or the same prompt repeated.
Both are read from the session's stored provenance, never guessed from a work key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from corix.storage.database import Database
from corix.storage.orm import SessionRow

__all__ = ["SessionAttempt", "session_attempts"]

_IN_CHUNK = 500


@dataclass(frozen=True, slots=True)
class SessionAttempt:
    """``template``: the persona template or script; ``prompt``: the template with its
    parameters and goal, which names one exact attempt that repeats share."""

    template: str
    prompt: str


def session_attempts(db: Database, session_ids: Sequence[str]) -> dict[str, SessionAttempt]:
    """session id → what it attempted, for the sessions whose provenance names a template."""
    found: dict[str, SessionAttempt] = {}
    with db.session() as s:
        for start in range(0, len(session_ids), _IN_CHUNK):
            chunk = list(session_ids[start : start + _IN_CHUNK])
            query = select(SessionRow.id, SessionRow.provenance).where(SessionRow.id.in_(chunk))
            for session_id, provenance in s.execute(query):
                template = (provenance or {}).get("template")
                if not template:
                    continue
                goal = ((provenance.get("brief") or {}).get("goal")) or ""
                parameters = json.dumps(provenance.get("parameters") or {}, sort_keys=True)
                found[session_id] = SessionAttempt(
                    template=str(template), prompt=f"{template} {parameters} {goal}".rstrip()
                )
    return found
