"""The offline demo: the demo applications through the pilot scenarios, end to end."""

from __future__ import annotations

import uuid
from typing import NamedTuple

from corix.domain import ApplicationEntry, EndReason, Level, LevelSettings, Plan, SessionSource
from corix.scenarios import list_builtin_packs
from corix.storage import (
    Database,
    NewSession,
    RecordWriter,
    SessionEnd,
    ensure_application,
    iter_sessions,
)

# Simulated users per application × scenario at each simulated level: enough to compare the
# two applications, few enough to keep the demo well under half a minute.
DEMO_SIMULATED_SESSIONS = 12

# Offline annotators: ARIA's five categories, and the harm packs checkable without a model.
DEMO_ANNOTATORS = ("reference", "reference-harms")

DEMO_APPLICATIONS = (
    ApplicationEntry(name="assistant-guarded", spec="demo:guarded"),
    ApplicationEntry(name="assistant-unguarded", spec="demo:unguarded"),
    # A tool-using agent, in the scenario whose pack gives it tools (the episode guide).
    ApplicationEntry(name="assistant-agent", spec="demo:agent", scenarios=["tv_spoilers"]),
)


def demo_plan(*, concurrency: int = 16) -> Plan:
    """The guarded and unguarded demo applications in every built-in scenario, and the demo
    agent in TV Spoilers (whose pack gives it tools), at every level.

    Red teamers and field testers are played by the scripted engine, so the demo needs no
    model and no network.
    """
    simulated = LevelSettings(sessions=DEMO_SIMULATED_SESSIONS, max_turns=6, engine="scripted")
    return Plan(
        name="demo",
        seed=7,
        applications=list(DEMO_APPLICATIONS),
        scenarios=list_builtin_packs(),
        levels={
            Level.MODEL_TESTING: LevelSettings(),
            Level.RED_TEAMING: simulated,
            Level.FIELD_TESTING: simulated,
        },
        concurrency=concurrency,
    )


class HumanLikeCell(NamedTuple):
    """A cell where scripted human-like testers replay the simulated testers' dialogues as
    people: to the end (``turns`` None), or stopping after ``turns`` replies."""

    application: str
    scenario: str
    level: Level
    turns: int | None
    behaviour: str


HUMAN_LIKE_CELLS = (
    HumanLikeCell(
        "assistant-guarded",
        "meal_planner",
        Level.FIELD_TESTING,
        None,
        "play the simulated personas to the end, as the simulated testers do",
    ),
    HumanLikeCell(
        "assistant-guarded",
        "pathfinder",
        Level.RED_TEAMING,
        1,
        "stop after the application's first reply, where the simulated red teamers press on",
    ),
)
HUMAN_LIKE_TESTERS = 4
"""People sharing a cell's human-like dialogues: the bootstrap resamples them as clusters."""
DEMO_DELTA = 0.35
"""The demo's cells hold 12 simulated dialogues: an interval of a difference from 12 against
12 is rarely narrower than ±0.3, so the demo states a wide δ (the default is 0.10)."""


async def add_human_like_testers(db: Database, run_id: str) -> int:
    """Store, in run ``run_id``, a human-like tester's dialogue for every simulated dialogue of
    :data:`HUMAN_LIKE_CELLS` (source ``human``, no persona template), before it is annotated;
    returns how many."""
    cells = {(c.application, c.scenario, c.level): c for c in HUMAN_LIKE_CELLS}
    specs = {entry.name: entry.spec for entry in DEMO_APPLICATIONS}
    found = [
        s
        for s in iter_sessions(db, run_id)
        if s.source is SessionSource.SIMULATED and (s.application, s.scenario, s.level) in cells
    ]
    async with RecordWriter(db) as writer:
        for at, session in enumerate(found):
            cell = cells[(session.application, session.scenario, session.level)]
            person = NewSession(
                id=uuid.uuid4().hex,
                run_id=run_id,
                work_key=None,
                application_id=ensure_application(db, session.application, specs[cell.application]),
                scenario=session.scenario,
                level=session.level,
                source=SessionSource.HUMAN,
                provenance=session.provenance.model_copy(update={"template": None, "engine": None}),
                tester_id=_FIRST_TESTER + at % HUMAN_LIKE_TESTERS,
            )
            writer.start_session(person)
            for turn in session.turns[: cell.turns]:
                writer.add_turn(person.id, turn.model_copy(update={"created_at": None}))
            writer.finish_session(SessionEnd(person.id, end_reason=EndReason.USER_ENDED))
    return len(found)


_FIRST_TESTER = 9000
"""Demo people's tester ids, clear of any web account a fresh database would have."""
