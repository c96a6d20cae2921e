"""Plans and queries shared by the simulated-user tests."""

from __future__ import annotations

from typing import Any

from corix.domain import ApplicationEntry, Level, LevelSettings, Plan, SessionRecord
from corix.storage import (
    Database,
    NewQuestionnaireAnswer,
    iter_sessions,
    measured_dialogues,
    questionnaire_answers,
)

GUARDED = ApplicationEntry(name="guarded", spec="demo:guarded")
UNGUARDED = ApplicationEntry(name="unguarded", spec="demo:unguarded")


def plan_for(
    *apps: ApplicationEntry,
    level: Level = Level.RED_TEAMING,
    scenarios: list[str] | None = None,
    seed: int = 11,
    **settings: Any,
) -> Plan:
    return Plan(
        name="simulated",
        seed=seed,
        applications=list(apps) or [GUARDED],
        scenarios=scenarios or ["tv_spoilers"],
        levels={level: LevelSettings(**settings)},
        concurrency=8,
    )


def sessions(db: Database, run_id: str) -> list[SessionRecord]:
    return list(iter_sessions(db, run_id))


def answers(db: Database, session_id: str) -> list[NewQuestionnaireAnswer]:
    """The session's questionnaire answers as written, by item."""
    return sorted(questionnaire_answers(db, [session_id]), key=lambda a: a.item_id)


def work_key(session: SessionRecord, db: Database) -> str:
    """The session's work-item key: a dialogue of one run is measured under it."""
    assert session.run_id is not None
    (dialogue,) = [
        d for d in measured_dialogues(db, [session.run_id]) if d.session_id == session.id
    ]
    # A session without a work key would be measured under its own id.
    assert dialogue.key != session.id
    return dialogue.key
