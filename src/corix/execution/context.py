"""What a running work item can reach: opened applications, packs and the writer.

Levels plug in here: a *planner* turns a plan's level settings into work items, a *handler*
turns one work item into a stored session. Both register by name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from corix.apps import Application
from corix.registry import Registry
from corix.storage import RecordSink

if TYPE_CHECKING:
    from corix.domain import LevelSettings, Plan
    from corix.execution.work import WorkItem
    from corix.llm import LLMClient
    from corix.scenarios import ScenarioPack


@dataclass
class OpenedApplication:
    name: str
    spec: str
    app: Application
    version: str
    db_id: int
    system_prompt: str | None = None


@dataclass
class RunContext:
    run_id: str
    plan: Plan
    applications: dict[str, OpenedApplication]
    packs: dict[str, ScenarioPack]
    writer: RecordSink
    simulators: dict[str, LLMClient] = field(default_factory=dict)
    on_session_done: Callable[[WorkItem], None] | None = None


Planner = Callable[["Plan", "LevelSettings", dict[str, "ScenarioPack"], str], Iterator["WorkItem"]]
WorkHandler = Callable[["WorkItem", RunContext], Awaitable[None]]

# corix's own levels are added by corix.levels.plugin, which execution cannot import (it is a
# layer above): named here, imported on the first read. corix.extension_points lists every
# registry.
LEVEL_PLANNERS: Registry[Planner] = Registry("level planner", builtins="corix.levels.plugin")
WORK_HANDLERS: Registry[WorkHandler] = Registry("work kind", builtins="corix.levels.plugin")
