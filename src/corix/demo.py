"""The offline demo: the demo applications through the pilot scenarios, end to end."""

from __future__ import annotations

from corix.domain import Level
from corix.execution import ApplicationEntry, LevelSettings, Plan
from corix.scenarios import list_builtin_packs

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
