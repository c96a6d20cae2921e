"""The Ray executor: a run's work items spread over worker processes on a Ray cluster.

Each worker is a Ray actor that opens the applications and simulators once and runs
corix's asyncio executor over the chunks the driver hands it. The plan's concurrency is a
global bound: it is split between the workers, so together they never hold more sessions
open. Rate limits of an endpoint are shared through one broker actor (see
:mod:`corix.execution.rate_broker`), so they are not multiplied by the number of workers.

Records reach the database through one path: a worker on PostgreSQL writes them itself
through a group-committing writer; on SQLite (a file on the driver's disk) a worker sends
each chunk's records back and the driver writes them, waiting while its writer's backlog
is full. A worker that dies loses only what it held (its share and one small chunk): the
driver drops the half-done sessions among them and sends the rest to live workers again
(:mod:`corix.execution.ray_dispatch`); only if no worker is left, or an item's attempts
are spent, does the run end ``failed`` with the count, and ``corix run --resume`` runs
what is missing, once. Model calls are counted as they finish, a dead worker's too
(:mod:`corix.execution.ray_usage`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import ray
from ray.actor import ActorHandle

from corix.apps import build_application
from corix.domain import Plan, RunUsage
from corix.errors import CorixError
from corix.execution.context import WORK_HANDLERS, OpenedApplication, RunContext
from corix.execution.executors import RunJob
from corix.execution.rate_broker import RateLimitBroker, brokered_limits
from corix.execution.ray_cluster import connect
from corix.execution.ray_dispatch import (
    WORKER_LOST,
    Dispatched,
    close_workers,
    dispatch_chunks,
    open_workers,
)
from corix.execution.ray_usage import UsageWatch
from corix.execution.resources import OwnedResources
from corix.execution.run_planning import auth_for
from corix.execution.runner import model_call_totals, open_clients
from corix.execution.work import WorkItem
from corix.llm import LLMClient, concurrency_share, even_share, shared_limits
from corix.scenarios import ScenarioPack
from corix.storage import (
    CollectedRecords,
    Database,
    LeaseFence,
    RecordSink,
    RecordWriter,
    Rejected,
    completed_work_keys,
    discard_incomplete_sessions,
)

__all__ = ["RayRunExecutor", "split_bound", "worker_cpus", "worker_pool"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs to run sessions: plain data, shipped once when it starts."""

    run_id: str
    plan: Plan
    packs: dict[str, ScenarioPack]
    applications: dict[str, tuple[int, str]]
    """Application name → its database id and version, as the driver recorded them."""
    database_url: str | None
    """Where the worker writes; ``None`` sends its records back to the driver."""
    concurrency: int
    worker: int
    """This worker's place among ``workers``: which share of each endpoint's bound it holds."""
    workers: int
    db_pool: int = 1
    """The connections this worker's database pool may hold."""
    fence: LeaseFence | None = None
    """The driver's lease: a worker's writes are refused once another process took the run
    over, as the driver's are."""


@dataclass(frozen=True)
class ChunkDone:
    records: CollectedRecords | None
    """The chunk's records, when the driver writes them."""
    refused: list[Rejected]
    """Records the database refused a worker that writes itself."""


class SessionWorker:
    """One worker process: opened applications and simulators, a share of the bound."""

    def __init__(self, setup: WorkerSetup, broker: ActorHandle[Any]) -> None:
        self._setup = setup
        self._broker = broker
        self._applications: dict[str, OpenedApplication] = {}
        self._simulators: dict[str, LLMClient] = {}
        self._db: Database | None = None
        self._slots = asyncio.Semaphore(setup.concurrency)
        self._cpu_started = 0.0
        self._owned = OwnedResources()  # what open() opened, closed by close()

    async def open(self) -> int:
        """Open the applications and simulators; return this worker's process id."""
        self._cpu_started = time.process_time()
        setup = self._setup
        with (
            shared_limits(
                brokered_limits(self._broker, worker=setup.worker, workers=setup.workers)
            ),
            concurrency_share(setup.worker, setup.workers),
        ):
            # Shared by the worker's clients, as in a run.
            connections, self._simulators = open_clients(setup.plan, self._owned, None, {})
            for entry in setup.plan.applications:
                app = build_application(entry.spec, entry.options, connections=connections)
                await app.open(auth_for(entry))
                self._owned.add(f"application '{entry.name}'", app.close)
                db_id, version = setup.applications[entry.name]
                self._applications[entry.name] = OpenedApplication(
                    entry.name, entry.spec, app, version, db_id, app.declared_system_prompt()
                )
        if setup.database_url is not None:
            self._db = Database(
                setup.database_url,
                run_migrations=False,
                pool_size=setup.db_pool,
                name=WORKER_CONNECTION_NAME,
            )
            self._owned.add("the worker's database pool", self._db.dispose)
        return os.getpid()

    async def run_chunk(self, items: list[WorkItem]) -> ChunkDone:
        records = CollectedRecords() if self._db is None else None
        if records is not None:
            await self._run(items, records)
            return ChunkDone(records, [])
        assert self._db is not None
        # Committed before the chunk is done; fenced by the driver's lease.
        async with RecordWriter(self._db, fence=self._setup.fence) as writer:
            await self._run(items, writer)
        return ChunkDone(None, writer.rejected)

    async def _run(self, items: list[WorkItem], sink: RecordSink) -> None:
        ctx = RunContext(
            run_id=self._setup.run_id,
            plan=self._setup.plan,
            applications=self._applications,
            packs=self._setup.packs,
            writer=sink,
            simulators=self._simulators,
        )

        async def one(item: WorkItem) -> None:
            async with self._slots:
                await WORK_HANDLERS.get(item.kind)(item, ctx)

        async with asyncio.TaskGroup() as group:
            for item in items:
                group.create_task(one(item))

    def usage(self) -> RunUsage:
        """The usage of this worker's clients so far, and its CPU."""
        cpu_s = round(time.process_time() - self._cpu_started, 3)
        usage = model_call_totals(self._applications, self._simulators)
        return usage.model_copy(update={"worker_cpu_s": cpu_s})

    async def usage_after(self, calls: int, step_s: float) -> RunUsage:
        """The usage so far, once more than ``calls`` model calls have finished, looking
        every ``step_s`` seconds (see :class:`~corix.execution.ray_usage.UsageWatch`)."""
        while True:
            usage = self.usage()
            if usage.model_calls > calls:
                return usage
            await asyncio.sleep(step_s)

    async def close(self) -> RunUsage:
        """Close what was opened (a failing close is logged with its component's name);
        return the usage of this worker's clients and its CPU."""
        await self._owned.aclose()
        return self.usage()


def _still_to_run(job: RunJob, items: list[WorkItem]) -> list[WorkItem]:
    """Of a dead worker's items, those it did not store complete; its half-done sessions
    among them are dropped, to be run again whole."""
    keys = {item.key for item in items}
    complete = completed_work_keys(job.db, job.run_id) & keys
    discard_incomplete_sessions(job.db, job.run_id, keys - complete)
    if job.on_session_done is not None:
        for item in items:
            if item.key in complete:
                job.on_session_done(item)
    return [item for item in items if item.key not in complete]


DEFAULT_WORKER_POOL = 2
"""PostgreSQL connections a worker holds unless ``--db-pool`` says otherwise: its writer's
commits and a read (annotation workers load what is stored)."""

WORKER_CONNECTION_NAME = "corix-worker"
"""The ``application_name`` of the workers' connections, as the server lists them."""


def worker_pool(budget: int | None, workers: int, *, least: int = 1) -> int:
    """Connections per worker: an even share of ``budget`` but at least ``least`` (what
    one worker cannot do without), or the default."""
    if budget is None:
        return max(least, DEFAULT_WORKER_POOL)
    return max(least, budget // workers)


BROKER_CPUS = 0.0
"""The broker answers one small call per rate-limited model call: no CPU of its own."""


def worker_cpus(cluster_cpus: float, workers: int) -> float:
    """The CPUs each worker declares: one, or an even share when more workers are asked
    for than the cluster has CPUs (so that every worker is placed)."""
    return min(1.0, cluster_cpus / workers)


def split_bound(bound: int, workers: int) -> list[int]:
    """Shares of a concurrency bound for ``workers`` workers: they add up to ``bound``, no
    share is empty (fewer workers when the bound is smaller) and they differ by at most 1."""
    count = max(1, min(bound, workers))
    return [even_share(bound, index, count) for index in range(count)]


class RayRunExecutor:
    """Runs work items on Ray workers: on the cluster at ``address``, or on a local Ray of
    its own (see :mod:`corix.execution.ray_cluster`).

    Workers open their own applications and simulators from the plan: clients the driver
    holds (``RunJob.simulators``) stay unused.
    """

    def __init__(
        self,
        *,
        address: str | None = None,
        workers: int | None = None,
        db_pool: int | None = None,
    ) -> None:
        self._address = address
        self._workers = workers
        self._db_pool = db_pool
        self._usage: list[RunUsage] = []
        self.worker_pids: list[int] = []
        """The workers' process ids once they are open (on this machine's local Ray)."""
        self.broker_pid: int | None = None
        self._started_ray = False

    def remote_usage(self) -> list[RunUsage]:
        return list(self._usage)

    def prepare(self) -> None:
        if not ray.is_initialized():
            self._started_ray = connect(self._address, num_cpus=self._workers)

    async def run(self, job: RunJob, work: Iterable[WorkItem]) -> None:
        self.prepare()
        try:
            await self._run_on_cluster(job, work)
        finally:
            if self._started_ray:
                ray.shutdown()
                self._started_ray = False

    async def _run_on_cluster(self, job: RunJob, work: Iterable[WorkItem]) -> None:
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        cpus = resources.get("CPU", 1.0)
        shares = split_bound(job.plan.concurrency, self._workers or max(1, int(cpus)))
        remote_broker: Any = ray.remote(RateLimitBroker)
        broker = remote_broker.options(num_cpus=BROKER_CPUS).remote()
        workers = self._start_workers(job, shares, worker_cpus(cpus, len(shares)), broker)
        watch: UsageWatch | None = None
        closed = False
        try:
            opened, died_starting = await open_workers([w.open.remote() for w in workers])
            self.worker_pids = list(opened.values())
            self.broker_pid = await _pid_of(broker)
            watch = UsageWatch(workers)
            outcome = await _dispatch(job, work, workers, shares, died_starting)
            live = [index for index in range(len(workers)) if index not in outcome.dead]
            for index, usage in (await close_workers(workers, live)).items():
                watch.final(index, usage)
            closed = True
            if outcome.not_run:
                raise CorixError(
                    f"{len(outcome.dead)} Ray worker(s) died; {outcome.not_run} session(s) "
                    f"were not run (`corix run --resume {job.run_id}` runs them)"
                )
        finally:
            if watch is not None:
                watch.stop()
                if not closed:  # stopped early (deadline, cancel, a failure): ask what ran
                    watch.ask_now()
                self._usage = watch.totals()
            for actor in [*workers, broker]:
                ray.kill(actor)  # a dead actor is killed quietly

    def _start_workers(
        self, job: RunJob, shares: list[int], cpus: float, broker: ActorHandle[Any]
    ) -> list[Any]:
        """One session worker per share of the bound, each declaring ``cpus``."""
        remote_worker: Any = ray.remote(SessionWorker)
        url = None if job.db.dialect == "sqlite" else job.db.url
        applications = {
            name: (opened.db_id, opened.version) for name, opened in job.applications.items()
        }
        return [
            remote_worker.options(num_cpus=cpus, max_restarts=0, max_task_retries=0).remote(
                WorkerSetup(
                    run_id=job.run_id,
                    plan=job.plan,
                    packs=job.packs,
                    applications=applications,
                    database_url=url,
                    concurrency=share,
                    worker=index,
                    workers=len(shares),
                    db_pool=worker_pool(self._db_pool, len(shares)),
                    fence=job.fence,
                ),
                broker,
            )
            for index, share in enumerate(shares)
        ]


async def _dispatch(
    job: RunJob,
    work: Iterable[WorkItem],
    workers: list[Any],
    shares: list[int],
    died_starting: set[int],
) -> Dispatched:
    """Hand ``work`` to the live workers and store what comes back through the run's writer."""
    async with job.writer as writer:

        async def store(chunk: list[WorkItem], done: ChunkDone) -> None:
            if done.records is not None:
                done.records.replay(writer)
                await writer.room()  # the backlog bound holds as in a local run
            writer.rejected.extend(done.refused)
            if job.on_session_done is not None:
                for item in chunk:
                    job.on_session_done(item)

        async def redo(items: list[WorkItem]) -> list[WorkItem]:
            return await asyncio.to_thread(_still_to_run, job, items)

        return await dispatch_chunks(
            iter(work),
            shares,
            lambda index, chunk: workers[index].run_chunk.remote(chunk),
            store,
            redo=redo,
            dead=died_starting,
        )


async def _pid_of(broker: Any) -> int | None:
    """The broker's process id; none when it died as it started (the workers then keep
    to their even shares of each rate limit)."""
    try:
        return int(await broker.pid.remote())
    except WORKER_LOST as exc:
        logger.warning("the Ray rate-limit broker died while starting: %s", exc)
        return None
