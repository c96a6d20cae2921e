"""Annotating a run: the entry points.

For every complete session of a run the blinded view is built once and the annotator is
asked for its targets:

* annotation-schema categories in the schema's order, the screening category (ARIA: risk
  assessment) first; categories gated on a violation are asked only when that pass's
  screening answers record one (the consensus of its repeats, when repeated);
* harms (``harm:<pack>``), independent of gating.

Every run of an item is stored as its own pass row (``repeat_no``); with more than one
repeat, the consensus of each answer over the annotator's runs is stored too, with its
flip rate. Nothing is stored twice: what a previous invocation stored is skipped (and
counted), so an interrupted run resumes where it stopped. One process at a time annotates
a run as a given annotator (a lock in the database, :mod:`corix.storage.locks`, released
even when its holder is killed); a second stops at once with a message.

The work is split by job: :mod:`~corix.assessment.annotation_run._job` (targets and what is
stored), :mod:`~corix.assessment.annotation_run._workers` (sessions to concurrent workers),
:mod:`~corix.assessment.annotation_run._session` (one session's items, passes and repeats)
and :mod:`~corix.assessment.annotation_run.repeat_consensus` (the consensus of repeated runs).
"""

from __future__ import annotations

import time
from pathlib import Path

from corix.assessment.annotation_run._factory import build_annotator
from corix.assessment.annotation_run._job import AnnotationJob
from corix.assessment.annotation_run._options import AnnotateOptions, ProgressHooks
from corix.assessment.annotation_run._settings import job_settings
from corix.assessment.annotation_run._summary import AnnotationSummary, TargetCounts
from corix.assessment.annotation_run._workers import annotate_sessions
from corix.assessment.harms import builtin_harm_packs
from corix.assessment.schema import load_builtin_schema
from corix.errors import CorixError
from corix.execution import OwnedResources, run_stoppable
from corix.llm import EndpointConfig, LLMClient, ResponseCache
from corix.storage import (
    Database,
    LockHeld,
    exclusive,
    holding_run,
    stopped_when_taken_over,
)

# The option and summary models live in their own modules; they are re-exported here
# because they are the vocabulary of these entry points.
__all__ = [
    "AnnotateOptions",
    "AnnotationSummary",
    "ProgressHooks",
    "TargetCounts",
    "annotate_run",
    "annotate_run_async",
]


async def annotate_run_async(
    db: Database,
    run_id: str,
    annotator: str = "reference",
    *,
    options: AnnotateOptions | None = None,
    client: LLMClient | None = None,
    progress: ProgressHooks | None = None,
) -> AnnotationSummary:
    """Annotate the complete sessions of ``run_id`` with the registered ``annotator``.

    LLM annotators need ``client`` (the caller owns and closes it). Bad options and
    unknown names raise before any session is annotated.
    """
    options = options or AnnotateOptions()
    schema = load_builtin_schema()
    packs = builtin_harm_packs()
    built = build_annotator(
        annotator,
        client=client,
        schema=schema,
        packs=packs,
        max_reasks=options.max_reasks,
        temperature=options.temperature,
    )
    job = AnnotationJob(db, run_id, built, options, schema, packs)
    started = time.perf_counter()
    try:
        with (
            holding_run(db, run_id, "corix annotate") as lease,
            exclusive(db, f"annotate {run_id} as {built.name}"),
        ):
            endpoint = None if client is None else client.endpoint
            settings = job_settings(job, annotator, endpoint)
            work = annotate_sessions(job, progress or ProgressHooks(), settings, lease)
            await stopped_when_taken_over(lease, work)
    except LockHeld:
        raise CorixError(
            f"run '{run_id}' is already being annotated as '{built.name}' by another "
            "process; wait for it to finish (a rerun then adds only what is missing)"
        ) from None
    return job.tally.summary(
        run_id=run_id,
        annotator=annotator,
        stored_as=built.name,
        wall_s=time.perf_counter() - started,
    )


def annotate_run(
    db: Database,
    run_id: str,
    annotator: str = "reference",
    *,
    options: AnnotateOptions | None = None,
    endpoint: EndpointConfig | None = None,
    cache: Path | None = None,
    progress: ProgressHooks | None = None,
) -> AnnotationSummary:
    """:func:`annotate_run_async` in a fresh event loop; opens a client on ``endpoint``
    (its replies cached in the SQLite file ``cache``), closed with the cache at the end
    whatever happens, a failing close logged with its component's name. SIGTERM stops it
    as Ctrl-C does (``KeyboardInterrupt`` once what was done is stored)."""

    async def main() -> AnnotationSummary:
        async with OwnedResources() as owned:
            opened = None if cache is None else ResponseCache(cache)
            if opened is not None:
                owned.add("the reply cache", opened.close)
            client = None if endpoint is None else LLMClient(endpoint, cache=opened)
            if client is not None:
                owned.add("the judge's client", client.aclose)
            return await annotate_run_async(
                db, run_id, annotator, options=options, client=client, progress=progress
            )

    return run_stoppable(main())
