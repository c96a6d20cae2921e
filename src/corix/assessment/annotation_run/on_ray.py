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
from dataclasses import dataclass, replace
from typing import Any

import ray
from ray.actor import ActorHandle

from corix.assessment.annotation_run._factory import build_annotator
from corix.assessment.annotation_run._job import AnnotationJob
from corix.assessment.annotation_run._options import AnnotateOptions, ProgressHooks
from corix.assessment.annotation_run._settings import job_settings
from corix.assessment.annotation_run._summary import AnnotationSummary, AnnotationTally
from corix.assessment.annotation_run._workers import annotate_these, sessions_to_annotate
from corix.assessment.harms import builtin_harm_packs
from corix.assessment.schema import load_builtin_schema
from corix.errors import CorixError
from corix.execution import ExecutorSettings
from corix.execution.on_ray import (
    BROKER_CPUS,
    WORKER_CONNECTION_NAME,
    RateLimitBroker,
    brokered_limits,
    close_workers,
    connect,
    dispatch_chunks,
    split_bound,
    worker_cpus,
    worker_pool,
)
from corix.llm import EndpointConfig, LLMClient, concurrency_share, shared_limits
from corix.storage import (
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

__all__ = ["annotate_run_on_ray"]


ANNOTATION_WORKER_POOL = 2
"""Connections an annotation worker cannot do without: reading stored sessions streams
one query while loading what it names through a second."""


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
        self._job = _job(self._db, setup.run_id, setup.annotator, setup.options, self._client)
        await asyncio.to_thread(self._job.load_stored)

    async def annotate(self, session_ids: list[str], *, refresh: bool = False) -> AnnotatedChunk:
        """Annotate one chunk; ``refresh`` first loads what is stored for it (a chunk a
        dead worker held)."""
        job = self._job
        assert job is not None
        if refresh:
            await asyncio.to_thread(job.refresh_stored, session_ids)
        tally = AnnotationTally()
        if self._setup.writes:
            # Committed before the chunk is done; fenced by the driver's lease.
            async with RecordWriter(self._db, fence=self._setup.fence) as writer:
                await annotate_these(job, session_ids, writer, slots=self._slots, tally=tally)
            return AnnotatedChunk(None, tally)
        records = CollectedRecords()
        await annotate_these(job, session_ids, records, slots=self._slots, tally=tally)
        return AnnotatedChunk(records, tally)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        self._db.dispose()


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
    # Built here only to check the options and names; its client is never called.
    checked = _job(
        db, run_id, annotator, options, None if endpoint is None else LLMClient(endpoint)
    )
    session_ids = asyncio.run(sessions_to_annotate(checked))
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
                db, lease, annotator, options, endpoint, settings, session_ids, hooks
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


def _annotate_on_ray(
    db: Database,
    lease: Lease,
    annotator: str,
    options: AnnotateOptions,
    endpoint: EndpointConfig | None,
    settings: ExecutorSettings,
    session_ids: list[str],
    hooks: ProgressHooks,
) -> AnnotationTally:
    setup = AnnotationSetup(
        run_id=lease.fence.run_id,
        annotator=annotator,
        options=options,
        endpoint=endpoint,
        database_url=db.url,
        writes=db.dialect != "sqlite",
        fence=lease.fence,
    )
    return asyncio.run(
        stopped_when_taken_over(
            lease, _annotate_on_cluster(db, setup, settings, session_ids, hooks)
        )
    )


async def _annotate_on_cluster(
    db: Database,
    setup: AnnotationSetup,
    settings: ExecutorSettings,
    session_ids: list[str],
    hooks: ProgressHooks,
) -> AnnotationTally:
    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    cpus = resources.get("CPU", 1.0)
    shares = split_bound(setup.options.concurrency, settings.ray_workers or max(1, int(cpus)))
    remote_broker: Any = ray.remote(RateLimitBroker)
    broker = remote_broker.options(num_cpus=BROKER_CPUS).remote()
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
    tally = AnnotationTally()
    try:
        await asyncio.gather(*(worker.open.remote() for worker in workers))
        async with RecordWriter(db, fence=setup.fence) as writer:

            async def store(chunk: list[str], done: AnnotatedChunk) -> None:
                tally.add(done.tally)
                if done.records is not None:
                    done.records.replay(writer)
                    await writer.room()  # the backlog bound holds as in a local run
                if hooks.on_session_done is not None:
                    for _ in chunk:
                        hooks.on_session_done()

            resent: set[str] = set()

            async def redo(chunk: list[str]) -> list[str]:
                resent.update(chunk)  # stored passes are kept: the next worker loads them
                return chunk

            def send(index: int, chunk: list[str]) -> Any:
                refresh = not resent.isdisjoint(chunk)
                return workers[index].annotate.remote(chunk, refresh=refresh)

            outcome = await dispatch_chunks(iter(session_ids), shares, send, store, redo=redo)
        await close_workers(workers, (i for i in range(len(workers)) if i not in outcome.dead))
        if outcome.not_run:
            raise CorixError(
                f"{len(outcome.dead)} Ray worker(s) died; {outcome.not_run} session(s) were "
                f"not annotated (annotating run {setup.run_id} again asks them)"
            )
        return tally
    finally:
        for actor in [*workers, broker]:
            ray.kill(actor)
