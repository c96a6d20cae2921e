"""A run request made ready to run: its plan, or the stored plan of the run it resumes."""

from __future__ import annotations

import pytest

from corix.domain import ApplicationEntry, Level, LevelSettings, Plan, PlanFile, read_run_plan
from corix.errors import ConfigError
from corix.execution import ExecutorSettings, RunRequest, plan_to_run, was_sequential
from corix.storage import Database, create_run

PLAN = Plan(
    name="request",
    seed=5,
    applications=[ApplicationEntry(name="demo", spec="demo:guarded")],
    scenarios=["tv_spoilers"],
    levels={Level.MODEL_TESTING: LevelSettings()},
)


def test_a_request_names_a_plan_or_a_run_to_resume() -> None:
    with pytest.raises(ValueError, match="not both"):
        RunRequest()
    with pytest.raises(ValueError, match="not both"):
        RunRequest(plan=PlanFile(PLAN), resume_run="run-1")


def test_a_resumed_run_runs_the_plan_it_stored(sqlite_db: Database) -> None:
    create_run(sqlite_db, "run-1", name="request", plan=PLAN, seed=5)
    source = plan_to_run(sqlite_db, RunRequest(resume_run="run-1"))
    assert source.plan == PLAN
    assert not was_sequential(sqlite_db, "run-1") and not was_sequential(sqlite_db, None)


@pytest.mark.parametrize(
    ("stored", "says"),
    [
        (
            {"name": "log", "kind": "imported", "source": "log.jsonl"},
            "was imported, not made from a plan",
        ),
        ({"name": "broken", "applications": "none"}, "its stored plan is not valid"),
    ],
)
def test_a_run_without_a_valid_plan_is_not_resumed(
    sqlite_db: Database, stored: dict[str, object], says: str
) -> None:
    create_run(sqlite_db, "run-2", name="x", plan=read_run_plan(stored), seed=0)
    with pytest.raises(ConfigError, match=says):
        plan_to_run(sqlite_db, RunRequest(resume_run="run-2"))


def test_a_response_cache_does_not_go_to_ray_workers(sqlite_db: Database) -> None:
    cached = PlanFile(PLAN.model_copy(update={"cache": "replies.sqlite"}))
    assert plan_to_run(sqlite_db, RunRequest(plan=cached)) is cached
    on_ray = RunRequest(plan=cached, executor=ExecutorSettings(kind="ray"))
    with pytest.raises(ConfigError, match="a response cache is a file on this machine"):
        plan_to_run(sqlite_db, on_ray)
