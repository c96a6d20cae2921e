"""What each session attempted (its persona template or script, its exact prompt), and
what each cell of a run used (dialogues, application calls, tokens).

Attacker-style rates group a run's sessions by what was tried: the same persona template
(or model-testing script) filled with different parameters, or the same prompt repeated.
Both are read from the session's stored provenance, never guessed from a work key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select

from corix.storage.database import Database
from corix.storage.orm import ApplicationRow, SessionRow, TurnRow

__all__ = ["CellUsage", "SessionAttempt", "cell_usage", "session_attempts"]

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


@dataclass(frozen=True, slots=True)
class CellUsage:
    """What one run's application × scenario × level used: dialogues, application calls
    (one per turn, failed ones included) and the tokens the application reported."""

    run_id: str
    application: str
    scenario: str
    level: str
    dialogues: int
    calls: int
    prompt_tokens: int
    completion_tokens: int


def cell_usage(db: Database, run_ids: Sequence[str]) -> list[CellUsage]:
    """Per run × application × scenario × level, counted from the stored turns."""
    query = (
        select(
            SessionRow.run_id,
            ApplicationRow.name,
            SessionRow.scenario,
            SessionRow.level,
            func.count(func.distinct(SessionRow.id)),
            func.count(TurnRow.id),
            func.coalesce(func.sum(TurnRow.prompt_tokens), 0),
            func.coalesce(func.sum(TurnRow.completion_tokens), 0),
        )
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .outerjoin(TurnRow, TurnRow.session_id == SessionRow.id)
        .where(SessionRow.run_id.in_(list(run_ids)))
        .group_by(SessionRow.run_id, ApplicationRow.name, SessionRow.scenario, SessionRow.level)
        .order_by(SessionRow.run_id, ApplicationRow.name, SessionRow.scenario, SessionRow.level)
    )
    with db.session() as s:
        return [CellUsage(*(row[:4]), *(int(v) for v in row[4:])) for row in s.execute(query)]
