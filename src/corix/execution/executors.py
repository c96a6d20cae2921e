"""Executors: where a run's work items run — this process's event loop, or a Ray cluster.

Both take the same :class:`RunJob` (what the driver prepared: the run, its opened
applications, its packs, its database) and the lazy stream of work items still to do, and
both store every session through one path. They differ only in where handlers run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from corix.domain import Plan, RunUsage
from corix.execution.context import WORK_HANDLERS, OpenedApplication, RunContext
from corix.execution.item_pool import WorkItemPool
from corix.execution.work import WorkItem
from corix.llm import LLMClient
from corix.scenarios import ScenarioPack
from corix.storage import Database, LeaseFence, RecordWriter

__all__ = [
    "LocalRunExecutor",
    "RunExecutor",
    "RunJob",
]


@dataclass
class RunJob:
    """What the driver prepared for a run: every executor gets the same."""

    run_id: str
    fence: LeaseFence
    """The run's lease: every write made for the run carries it (see ``run_lease``)."""
    plan: Plan
    packs: dict[str, ScenarioPack]
    db: Database
    writer: RecordWriter
    """Where records reach the database; the executor opens it (the runner reads what the
    database refused from it afterwards)."""
    applications: dict[str, OpenedApplication]
    simulators: dict[str, LLMClient] = field(default_factory=dict)
    on_session_done: Callable[[WorkItem], None] | None = None


class RunExecutor(Protocol):
    def prepare(self) -> None:
        """Reach what the executor runs on (a cluster); called before the run is stored, so
        that a failure here (a :class:`~corix.errors.CorixError`) leaves no run behind."""

    async def run(self, job: RunJob, work: Iterable[WorkItem]) -> None:
        """Run every item of ``work`` into ``job.db``; stopping it loses only what is in flight."""

    def remote_usage(self) -> list[RunUsage]:
        """Usage of the clients this executor opened elsewhere (the driver counts its own)."""


class LocalRunExecutor:
    """Every work item on this event loop, at most ``plan.concurrency`` sessions at once."""

    def prepare(self) -> None:
        """Nothing to reach: the work runs here."""

    async def run(self, job: RunJob, work: Iterable[WorkItem]) -> None:
        async with job.writer as writer:
            ctx = RunContext(
                run_id=job.run_id,
                plan=job.plan,
                applications=job.applications,
                packs=job.packs,
                writer=writer,
                simulators=job.simulators,
                on_session_done=job.on_session_done,
            )

            async def handle(item: WorkItem) -> None:
                await writer.room()
                await WORK_HANDLERS.get(item.kind)(item, ctx)

            await WorkItemPool(job.plan.concurrency).run(work, handle)

    def remote_usage(self) -> list[RunUsage]:
        return []
