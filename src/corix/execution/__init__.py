"""The execution layer: running a plan, from preflight to the finished run's row.

``execute_plan`` checks a plan (``preflight``), opens its applications and simulators, turns
it into work items (``WorkItem``, plain data with stable keys) and runs them on an executor
(``LocalRunExecutor`` in this process, ``RayRunExecutor`` on a cluster). Levels plug in by
name: a planner (``LEVEL_PLANNERS``) makes a level's work items, a handler
(``WORK_HANDLERS``) turns one into a stored session; the levels layer registers corix's own
(:mod:`corix.levels.plugin`).
"""

from corix.execution._preflight import PreflightError, preflight
from corix.execution.context import (
    LEVEL_PLANNERS,
    WORK_HANDLERS,
    Planner,
    RunContext,
    WorkHandler,
)
from corix.execution.executor_settings import ExecutorSettings, build_executor
from corix.execution.resources import OwnedResources
from corix.execution.run_request import RunRequest, plan_to_run, was_sequential
from corix.execution.run_status import RunStatus
from corix.execution.run_stopper import run_stoppable
from corix.execution.runner import RunResult, execute_plan, new_run_id
from corix.execution.waves import Group, WaveDecision, WaveOrder, execute_in_waves
from corix.execution.work import WorkItem

__all__ = [
    "LEVEL_PLANNERS",
    "WORK_HANDLERS",
    "ExecutorSettings",
    "Group",
    "OwnedResources",
    "Planner",
    "PreflightError",
    "RunContext",
    "RunRequest",
    "RunResult",
    "RunStatus",
    "WaveDecision",
    "WaveOrder",
    "WorkHandler",
    "WorkItem",
    "build_executor",
    "execute_in_waves",
    "execute_plan",
    "new_run_id",
    "plan_to_run",
    "preflight",
    "run_stoppable",
    "was_sequential",
]
