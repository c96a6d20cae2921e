"""Annotating a run on Ray: its sessions spread over worker processes.

Each worker opens the annotator (and its client, under the cluster-wide rate limits of
:mod:`corix.execution.rate_broker`) once, loads what is already stored, and annotates the
small chunks of session ids the driver hands it, at most its share of ``--concurrency``
sessions at once. Workers read the database; passes reach it through one path, as for
runs: a worker on PostgreSQL writes them itself, a worker on SQLite sends each chunk's
passes back for the driver to write (SQLite workers must see the database file: a local
Ray). A dead worker's sessions go to live workers again, which first load what it did
store, so no repeat is asked twice; only if none is left does the driver report them,
and annotating the run again asks exactly those. The summary counts the chunks that came
back, each with its own tally: a dead worker's finished chunks count, and the calls it
made for chunks it held when it died, done again elsewhere, do not.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import ray
from ray.actor import ActorHandle

from corix.assessment.annotation_run._factory import build_annotator
from corix.assessment.annotation_run._job import AnnotationJob
from corix.assessment.annotation_run._options import AnnotateOptions, ProgressHooks
from corix.assessment.annotation_run._pilot import count_pilot, measured_noise, pilot_sessions
from corix.assessment.annotation_run._settings import job_settings
from corix.assessment.annotation_run._summary import AnnotationSummary, AnnotationTally
from corix.assessment.annotation_run._workers import annotate_these, sessions_to_annotate
from corix.assessment.harms import builtin_harm_packs
from corix.assessment.schema import load_builtin_schema
from corix.errors import CorixError
from corix.execution import ExecutorSettings, OwnedResources, run_stoppable
from corix.execution.on_ray import (
    BROKER_CPUS,
    WORKER_CONNECTION_NAME,
    RateLimitBroker,
    brokered_limits,
    close_workers,
    connect,
    dispatch_chunks,
    open_workers,
    split_bound,
    worker_cpus,
    worker_pool,
)
from corix.llm import EndpointConfig, LLMClient, concurrency_share, shared_limits
from corix.storage import (
    AnnotationSink,
    CollectedRecords,
    Database,
    Lease,
    LeaseFence,
    LockHeld,
    RecordWriter,
    exclusive,
    get_run,
    holding_run,
    record_annotation_job,
    stopped_when_taken_over,
)

__all__ = ["annotate_run_on_ray", "annotation_workers"]


ANNOTATION_WORKER_POOL = 2
"""Connections an annotation worker cannot do without: reading stored sessions streams
one query while loading what it names through a second."""


def annotation_workers(wanted: int, db_pool: int | None) -> int:
    """Workers to start: ``wanted``, but no more than ``db_pool`` connections can serve
    (:data:`ANNOTATION_WORKER_POOL` each), so that together they hold at most the budget."""
    if db_pool is None:
        return wanted
    if db_pool < ANNOTATION_WORKER_POOL:
        raise CorixError(
            f"--db-pool {db_pool} is too few for annotating on Ray: a worker needs "
            f"{ANNOTATION_WORKER_POOL} connections; give --db-pool {ANNOTATION_WORKER_POOL} "
            "or more"
        )
    return min(wanted, db_pool // ANNOTATION_WORKER_POOL)


@dataclass(frozen=True)
class AnnotationSetup:
    run_id: str
    annotator: str
    options: AnnotateOptions
    endpoint: EndpointConfig | None
    database_url: str
    writes: bool
    """Whether the worker writes its passes itself (PostgreSQL) or sends them back."""
    worker: int = 0
    """This worker's place among ``workers``: which share of the judge's bound it holds."""
    workers: int = 1
    db_pool: int = ANNOTATION_WORKER_POOL
    """The connections this worker's database pool may hold (PostgreSQL)."""
    fence: LeaseFence | None = None
    """The driver's lease on the run: the worker's writes are fenced by it."""


@dataclass(frozen=True)
class AnnotatedChunk:
    """What a worker did with one chunk: its passes (when the driver writes them) and counts."""

    records: CollectedRecords | None
    tally: AnnotationTally


class AnnotationWorker:
    """One worker process: an opened annotator over the run, with a share of the bound."""

    def __init__(self, setup: AnnotationSetup, broker: ActorHandle[Any]) -> None:
        self._setup = setup
        self._broker = broker
        self._db = Database(
            setup.database_url,
            run_migrations=False,
            pool_size=setup.db_pool,
            name=WORKER_CONNECTION_NAME,
        )
        self._owned = OwnedResources()  # closed by close(): the client, then the pool
        self._owned.add("the worker's database pool", self._db.dispose)
        self._client: LLMClient | None = None
        self._job: AnnotationJob | None = None
        self._slots = asyncio.Semaphore(setup.options.concurrency)

    async def open(self) -> None:
        setup = self._setup
        if setup.endpoint is not None:
            with (
                shared_limits(
                    brokered_limits(self._broker, worker=setup.worker, workers=setup.workers)
                ),
                concurrency_share(setup.worker, setup.workers),
            ):
                self._client = LLMClient(setup.endpoint)
            self._owned.add("the judge's client", self._client.aclose)
        self._job = _job(self._db, setup.run_id, setup.annotator, setup.options, self._client)
        await asyncio.to_thread(self._job.load_stored)

    async def annotate(
        self,
        session_ids: list[str],
        *,
        refresh: bool = False,
        pilot: bool = False,
        noise: float | None = None,
    ) -> AnnotatedChunk:
        """Annotate one chunk; ``refresh`` first loads what is stored for it (a chunk a
        dead worker held, or the adaptive pilot's); ``pilot`` asks only the pilot's
        repeats; ``noise`` is the judge noise the pilot measured."""
        job = self._job
        assert job is not None
        if refresh:
            await asyncio.to_thread(job.refresh_stored, session_ids)
        if noise is not None:
            job.noise = noise
        tally = AnnotationTally()
        sink: AnnotationSink
        if self._setup.writes:
            # Committed before the chunk is done; fenced by the driver's lease.
            async with RecordWriter(self._db, fence=self._setup.fence) as sink:
                await annotate_these(
                    job, session_ids, sink, slots=self._slots, tally=tally, pilot=pilot
                )
            return AnnotatedChunk(None, tally)
        sink = records = CollectedRecords()
        await annotate_these(job, session_ids, sink, slots=self._slots, tally=tally, pilot=pilot)
        return AnnotatedChunk(records, tally)

    async def close(self) -> None:
        """Close what was opened; a failing close is logged with its component's name."""
        await self._owned.aclose()


def _job(
    db: Database,
    run_id: str,
    annotator: str,
    options: AnnotateOptions,
    client: LLMClient | None,
) -> AnnotationJob:
    schema, packs = load_builtin_schema(), builtin_harm_packs()
    built = build_annotator(
        annotator,
        client=client,
        schema=schema,
        packs=packs,
        max_reasks=options.max_reasks,
        temperature=options.temperature,
    )
    return AnnotationJob(db, run_id, built, options, schema, packs)


def annotate_run_on_ray(
    db: Database,
    run_id: str,
    annotator: str,
    *,
    options: AnnotateOptions,
    endpoint: EndpointConfig | None,
    settings: ExecutorSettings,
    progress: ProgressHooks | None = None,
) -> AnnotationSummary:
    """:func:`~corix.assessment.annotation_run.annotate_run` with the sessions spread over Ray."""
    started = time.perf_counter()
    get_run(db, run_id)
    annotation_workers(1, settings.db_pool)  # a budget too small fails before any work
    checked, session_ids = asyncio.run(_checked(db, run_id, annotator, options, endpoint))
    hooks = progress or ProgressHooks()
    if hooks.on_planned is not None:
        hooks.on_planned(len(session_ids))
    started_ray = connect(settings.ray_address, num_cpus=settings.ray_workers)
    try:
        with (
            holding_run(db, run_id, "corix annotate") as lease,
            exclusive(db, f"annotate {run_id} as {checked.annotator.name}"),
        ):
            record_annotation_job(db, run_id, job_settings(checked, annotator, endpoint))
            tally = _annotate_on_ray(
                checked, lease, annotator, endpoint, settings, session_ids, hooks
            )
    except LockHeld:
        raise CorixError(
            f"run '{run_id}' is already being annotated as '{checked.annotator.name}' by "
            "another process; wait for it to finish (a rerun then adds only what is missing)"
        ) from None
    finally:
        if started_ray:
            ray.shutdown()
    return tally.summary(
        run_id=run_id,
        annotator=annotator,
        stored_as=checked.annotator.name,
        wall_s=time.perf_counter() - started,
    )


async def _checked(
    db: Database,
    run_id: str,
    annotator: str,
    options: AnnotateOptions,
    endpoint: EndpointConfig | None,
) -> tuple[AnnotationJob, list[str]]:
    """The job, built here only to check the options and names, and the sessions it
    annotates; its client is never called, and is closed before the workers start."""
    async with OwnedResources() as owned:
        client = None if endpoint is None else LLMClient(endpoint)
        if client is not None:
            owned.add("the checking client", client.aclose)
        checked = _job(db, run_id, annotator, options, client)
        return checked, await sessions_to_annotate(checked)


def _annotate_on_ray(
    job: AnnotationJob,
    lease: Lease,
    annotator: str,
    endpoint: EndpointConfig | None,
    settings: ExecutorSettings,
    session_ids: list[str],
    hooks: ProgressHooks,
) -> AnnotationTally:
    setup = AnnotationSetup(
        run_id=lease.fence.run_id,
        annotator=annotator,
        options=job.options,
        endpoint=endpoint,
        database_url=job.db.url,
        writes=job.db.dialect != "sqlite",
        fence=lease.fence,
    )
    return run_stoppable(
        stopped_when_taken_over(
            lease, _annotate_on_cluster(job, setup, settings, session_ids, hooks)
        )
    )


def _start_workers(
    setup: AnnotationSetup, settings: ExecutorSettings, broker: ActorHandle[Any]
) -> tuple[list[Any], list[int]]:
    """One annotation worker per share of ``--concurrency``, with its share of the pool."""
    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    cpus = resources.get("CPU", 1.0)
    wanted = annotation_workers(settings.ray_workers or max(1, int(cpus)), settings.db_pool)
    shares = split_bound(setup.options.concurrency, wanted)
    remote_worker: Any = ray.remote(AnnotationWorker)
    per_worker = worker_cpus(cpus, len(shares))
    workers = [
        remote_worker.options(num_cpus=per_worker, max_restarts=0, max_task_retries=0).remote(
            replace(
                setup,
                options=setup.options.model_copy(update={"concurrency": share}),
                worker=index,
                workers=len(shares),
                db_pool=worker_pool(settings.db_pool, len(shares), least=ANNOTATION_WORKER_POOL),
            ),
            broker,
        )
        for index, share in enumerate(shares)
    ]
    return workers, shares


class _Dispatcher:
    """Hands sessions to the live workers in chunks, and stores what comes back."""

    def __init__(
        self, db: Database, setup: AnnotationSetup, workers: list[Any], shares: list[int]
    ) -> None:
        self.db, self.setup, self.workers, self.shares = db, setup, workers, shares
        self.dead: set[int] = set()
        self.not_run = 0
        self.refresh: set[str] = set()
        """Sessions whose worker must first load what is stored: stored since it opened."""

    async def run(
        self,
        session_ids: list[str],
        tally: AnnotationTally,
        *,
        pilot: bool = False,
        noise: float | None = None,
        on_session_done: Callable[[], None] | None = None,
    ) -> None:
        live = [i for i in range(len(self.workers)) if i not in self.dead]

        async def redo(chunk: list[str]) -> list[str]:
            self.refresh.update(chunk)  # stored passes are kept: the next worker loads them
            return chunk

        def send(index: int, chunk: list[str]) -> Any:
            refresh = not self.refresh.isdisjoint(chunk)
            worker = self.workers[live[index]]
            return worker.annotate.remote(chunk, refresh=refresh, pilot=pilot, noise=noise)

        async with RecordWriter(self.db, fence=self.setup.fence) as writer:

            async def store(chunk: list[str], done: AnnotatedChunk) -> None:
                tally.add(done.tally)
                if done.records is not None:
                    done.records.replay(writer)
                    await writer.room()  # the backlog bound holds as in a local run
                if on_session_done is not None:
                    for _ in chunk:
                        on_session_done()

            shares = [self.shares[i] for i in live]
            outcome = await dispatch_chunks(iter(session_ids), shares, send, store, redo=redo)
        self.dead.update(live[i] for i in outcome.dead)
        self.not_run += outcome.not_run


async def _annotate_on_cluster(
    job: AnnotationJob,
    setup: AnnotationSetup,
    settings: ExecutorSettings,
    session_ids: list[str],
    hooks: ProgressHooks,
) -> AnnotationTally:
    remote_broker: Any = ray.remote(RateLimitBroker)
    broker = remote_broker.options(num_cpus=BROKER_CPUS).remote()
    workers, shares = _start_workers(setup, settings, broker)
    tally, pilot_tally = AnnotationTally(), AnnotationTally()
    try:
        _, died_starting = await open_workers([worker.open.remote() for worker in workers])
        dispatcher = _Dispatcher(job.db, setup, workers, shares)
        dispatcher.dead.update(died_starting)  # they get no work
        noise = None
        if setup.options.adaptive:
            # The pilot first, then one noise for every worker (see _pilot).
            pilot = pilot_sessions(session_ids, setup.options.seed)
            await dispatcher.run(pilot, pilot_tally, pilot=True)
            await asyncio.to_thread(job.refresh_stored, pilot)
            noise = tally.judge_noise = await asyncio.to_thread(measured_noise, job, pilot)
            dispatcher.refresh.update(pilot)
        if not dispatcher.not_run:
            await dispatcher.run(
                session_ids, tally, noise=noise, on_session_done=hooks.on_session_done
            )
        count_pilot(tally, pilot_tally)
        live = (i for i in range(len(workers)) if i not in dispatcher.dead)
        await close_workers(workers, live)
        if dispatcher.not_run:
            raise CorixError(
                f"{len(dispatcher.dead)} Ray worker(s) died; {dispatcher.not_run} session(s) "
                f"were not annotated (annotating run {setup.run_id} again asks them)"
            )
        return tally
    finally:
        for actor in [*workers, broker]:
            ray.kill(actor)
