"""Feeding a run's sessions to concurrent workers, each annotating one session at a time.

Sessions load from storage in chunks, in a thread, while the workers annotate; passes go
through the group-committing :class:`~corix.storage.RecordWriter`. Model calls are
further bounded by the client's own concurrency limit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from corix.assessment.annotation_run._job import AnnotationJob
from corix.assessment.annotation_run._options import ProgressHooks
from corix.assessment.annotation_run._pilot import count_pilot, measured_noise, pilot_sessions
from corix.assessment.annotation_run._session import SessionAnnotation
from corix.assessment.annotation_run._summary import AnnotationTally
from corix.domain import AnnotationJobSettings, SessionRecord
from corix.storage import (
    AnnotationSink,
    Lease,
    RecordWriter,
    get_run,
    iter_sessions,
    record_annotation_job,
    session_infos,
)

_SESSION_CHUNK = 200

SessionQueue = asyncio.Queue[SessionRecord | None]
"""Sessions to annotate; ``None`` tells a worker to stop."""


async def annotate_sessions(
    job: AnnotationJob, progress: ProgressHooks, settings: AnnotationJobSettings, lease: Lease
) -> None:
    """Annotate every complete session of the job's run with ``concurrency`` workers.

    ``settings`` are stored with the run once it is known that the job can start; every
    pass is written under ``lease`` (refused once another process took the run over).
    """
    get_run(job.db, job.run_id)
    await asyncio.to_thread(job.load_stored)
    session_ids = await sessions_to_annotate(job)
    await asyncio.to_thread(record_annotation_job, job.db, job.run_id, settings)
    if progress.on_planned is not None:
        progress.on_planned(len(session_ids))
    pilot_tally = AnnotationTally()
    if job.options.adaptive:
        pilot = pilot_sessions(session_ids, job.options.seed)
        # Its own writer: what the pilot stored is committed before it is read back.
        async with RecordWriter(job.db, fence=lease.fence, on_lost=lease.mark_lost) as writer:
            await annotate_these(job, pilot, writer, tally=pilot_tally, pilot=True)
        await asyncio.to_thread(job.refresh_stored, pilot)
        job.noise = job.tally.judge_noise = await asyncio.to_thread(measured_noise, job, pilot)
    async with RecordWriter(job.db, fence=lease.fence, on_lost=lease.mark_lost) as writer:
        await annotate_these(job, session_ids, writer, progress.on_session_done)
    count_pilot(job.tally, pilot_tally)


async def sessions_to_annotate(job: AnnotationJob) -> list[str]:
    """The run's sessions an annotator judges; an unknown scenario raises before any call."""
    infos = await asyncio.to_thread(session_infos, job.db, job.run_id, answered_only=True)
    for scenario in sorted({info.scenario for info in infos.values()}):
        job.pack_for(scenario)
    return list(infos)


async def annotate_these(
    job: AnnotationJob,
    session_ids: list[str],
    sink: AnnotationSink,
    on_session_done: Callable[[], None] | None = None,
    *,
    slots: asyncio.Semaphore | None = None,
    tally: AnnotationTally | None = None,
    pilot: bool = False,
) -> None:
    """Annotate ``session_ids`` (stored passes loaded) with ``concurrency`` workers;
    ``slots``, shared by concurrent calls (a Ray worker's chunks), bounds the sessions in
    flight across all of them. What they did is counted in ``tally`` (else the job's).
    ``pilot``: ask only the adaptive pilot's repeats."""
    counted = job.tally if tally is None else tally
    concurrency = min(job.options.concurrency, max(1, len(session_ids)))
    queue: SessionQueue = asyncio.Queue(concurrency * 2)
    async with asyncio.TaskGroup() as group:
        group.create_task(_feed(job, queue, session_ids, concurrency))
        for _ in range(concurrency):
            group.create_task(_work(job, queue, sink, counted, on_session_done, slots, pilot))


async def _feed(job: AnnotationJob, queue: SessionQueue, ids: list[str], workers: int) -> None:
    chunks = [ids[i : i + _SESSION_CHUNK] for i in range(0, len(ids), _SESSION_CHUNK)]
    # Each chunk loads in a thread while the workers annotate the one before it.
    following: asyncio.Task[list[SessionRecord]] | None = None
    for index, chunk in enumerate(chunks):
        current = following or _loading(job, chunk)
        following = _loading(job, chunks[index + 1]) if index + 1 < len(chunks) else None
        for record in await current:
            await queue.put(record)
    for _ in range(workers):
        await queue.put(None)


def _loading(job: AnnotationJob, session_ids: list[str]) -> asyncio.Task[list[SessionRecord]]:
    return asyncio.create_task(asyncio.to_thread(_load, job, session_ids))


def _load(job: AnnotationJob, session_ids: list[str]) -> list[SessionRecord]:
    with job.reads:
        return list(iter_sessions(job.db, session_ids=session_ids))


async def _work(
    job: AnnotationJob,
    queue: SessionQueue,
    writer: AnnotationSink,
    tally: AnnotationTally,
    on_session_done: Callable[[], None] | None,
    slots: asyncio.Semaphore | None,
    pilot: bool,
) -> None:
    while (record := await queue.get()) is not None:
        annotation = SessionAnnotation(job, writer, record, tally)
        async with slots or contextlib.nullcontext():
            await (annotation.run_pilot() if pilot else annotation.run())
        if pilot:
            continue  # the main pass counts the session
        tally.sessions += 1
        if on_session_done is not None:
            on_session_done()
