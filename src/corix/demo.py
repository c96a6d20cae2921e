"""The offline demo: both demo applications through the pilot scenarios, end to end."""

from __future__ import annotations

from corix.domain import Level
from corix.execution.plan import ApplicationEntry, LevelSettings, Plan
from corix.testing.packs import list_builtin_packs

DEMO_APPLICATIONS = (
    ApplicationEntry(name="assistant-guarded", spec="demo:guarded"),
    ApplicationEntry(name="assistant-unguarded", spec="demo:unguarded"),
)


def demo_plan(*, concurrency: int = 16) -> Plan:
    """Model testing of both demo applications in every built-in scenario."""
    return Plan(
        name="demo",
        seed=7,
        applications=list(DEMO_APPLICATIONS),
        scenarios=list_builtin_packs(),
        levels={Level.MODEL_TESTING: LevelSettings()},
        concurrency=concurrency,
    )
