"""What a plan asks for, before anything runs: its work items and its applications' credentials."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from corix.config import json_object_from_env
from corix.domain import ApplicationEntry, JsonObject, Plan
from corix.errors import CorixError
from corix.execution.context import LEVEL_PLANNERS
from corix.execution.work import WorkItem
from corix.scenarios import ScenarioPack

__all__ = ["PlannedRun", "auth_for", "plan_run", "plan_work"]


def auth_for(entry: ApplicationEntry) -> JsonObject | None:
    """The credentials in ``entry.auth_env``; an unset or malformed variable raises."""
    if entry.auth_env is None:
        return None
    credentials = json_object_from_env(entry.auth_env)
    if credentials is None:
        raise CorixError(
            f"application '{entry.name}' needs credentials in ${entry.auth_env}, which is unset"
        )
    return credentials


def plan_work(
    plan: Plan, packs: dict[str, ScenarioPack], run_id: str, done: set[str]
) -> Iterator[WorkItem]:
    """The plan's work items not yet done, generated lazily so memory stays flat."""
    for level, settings in plan.levels.items():
        for item in LEVEL_PLANNERS.get(level.value)(plan, settings, packs, run_id):
            if item.key not in done:
                yield item


@dataclass(frozen=True)
class PlannedRun:
    """What a run takes from its plan, asked for once: each application's credentials (by
    name) and the work items still to do."""

    credentials: dict[str, JsonObject | None]
    work: Iterator[WorkItem]


def plan_run(plan: Plan, packs: dict[str, ScenarioPack], run_id: str, done: set[str]) -> PlannedRun:
    """The credentials and the lazy work items of run ``run_id``; an unset credential raises."""
    credentials = {entry.name: auth_for(entry) for entry in plan.applications}
    return PlannedRun(credentials, plan_work(plan, packs, run_id, done))
