"""The smallest valid plan, for tests that need a stored run but not what its plan says."""

from corix.domain import ApplicationEntry, Level, LevelSettings, Plan


def bare_plan(name: str = "t") -> Plan:
    return Plan(
        name=name,
        applications=[ApplicationEntry(name="app", spec="demo:guarded")],
        scenarios=["tv_spoilers"],
        levels={Level.MODEL_TESTING: LevelSettings()},
    )
