"""A run's stored plan is read as the model its maker wrote, or kept as given when outdated."""

from __future__ import annotations

import pytest

from corix.domain import (
    ApplicationEntry,
    HumanRunPlan,
    ImportedRunPlan,
    Level,
    LevelSettings,
    OutdatedPlan,
    Plan,
    plan_gates,
    read_run_plan,
    run_plan_json,
    runnable_plan,
)
from corix.errors import ConfigError

PLAN = Plan(
    name="p",
    applications=[ApplicationEntry(name="demo", spec="demo:guarded")],
    scenarios=["tv_spoilers"],
    levels={Level.MODEL_TESTING: LevelSettings()},
    gates={"spoilers": 0.1},
)
# A simulator endpoint as plans gave it before EndpointConfig named it max_concurrency.
OLD_PLAN = {
    **PLAN.model_dump(mode="json"),
    "levels": {"red_teaming": {"engine": "llm", "simulator": {"model": "m", "concurrency": 5}}},
}


def test_each_maker_of_a_run_reads_back_as_its_own_model() -> None:
    assert read_run_plan(run_plan_json(PLAN)) == PLAN
    human = read_run_plan({"name": "series", "kind": "human"})
    assert human == HumanRunPlan(name="series")
    imported = read_run_plan({"name": "log", "kind": "imported", "source": "log.jsonl"})
    assert imported == ImportedRunPlan(name="log", source="log.jsonl")
    assert run_plan_json(imported) == {"name": "log", "kind": "imported", "source": "log.jsonl"}


def test_an_outdated_plan_is_kept_as_given_and_never_run() -> None:
    outdated = read_run_plan(OLD_PLAN)
    assert isinstance(outdated, OutdatedPlan)
    assert "concurrency" in outdated.problem
    assert run_plan_json(outdated) == OLD_PLAN
    assert plan_gates(outdated) == {}
    with pytest.raises(ConfigError, match="its stored plan is not valid"):
        runnable_plan("run-1", outdated)


def test_only_a_run_plan_runs_and_gates() -> None:
    assert runnable_plan("run-1", PLAN) is PLAN
    assert plan_gates(PLAN) == {"spoilers": 0.1}
    with pytest.raises(ConfigError, match="human run, not made from a plan"):
        runnable_plan("run-2", HumanRunPlan(name="series"))
