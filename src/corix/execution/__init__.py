"""The execution layer: plans, work items and the executor that runs them.

A plan (``Plan``) becomes work items (``WorkItem``, plain data with stable keys); level
planners and work handlers register by name (``LEVEL_PLANNERS``, ``WORK_HANDLERS``), so the
testing layer plugs its levels in and an executor other than ``LocalExecutor`` can run the
same items.
"""

from corix.execution.context import (
    LEVEL_PLANNERS,
    WORK_HANDLERS,
    OpenedApplication,
    Planner,
    RunContext,
    WorkHandler,
)
from corix.execution.local import LocalExecutor
from corix.execution.plan import (
    ApplicationEntry,
    EndpointRef,
    LevelSettings,
    Plan,
    PlanFile,
    load_plan,
    load_plan_file,
)
from corix.execution.run_status import RunStatus, finished_status
from corix.execution.stopping import RunStopper
from corix.execution.work import WorkItem

__all__ = [
    "LEVEL_PLANNERS",
    "WORK_HANDLERS",
    "ApplicationEntry",
    "EndpointRef",
    "LevelSettings",
    "LocalExecutor",
    "OpenedApplication",
    "Plan",
    "PlanFile",
    "Planner",
    "RunContext",
    "RunStatus",
    "RunStopper",
    "WorkHandler",
    "WorkItem",
    "finished_status",
    "load_plan",
    "load_plan_file",
]
