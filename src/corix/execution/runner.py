"""Runs a plan: preflight, open the applications, execute the work items, store everything.

The run row is created only once preflight passed, so a plan that cannot run leaves no
trace. Whatever happens next, the row ends with a status (see ``RunStatus``) and a summary
counted from the database for the whole run, resumes included.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from corix.apps import AdapterSpec, build_application
from corix.domain import Invocation, Plan, PlanFile, RunSummary, RunUsage, runnable_plan
from corix.errors import CorixError
from corix.execution._preflight import PreflightError, Problem, preflight
from corix.execution.collector import collected_sparingly
from corix.execution.context import OpenedApplication
from corix.execution.executors import LocalRunExecutor, RunExecutor, RunJob
from corix.execution.resources import OwnedResources
from corix.execution.run_planning import auth_for, plan_work
from corix.execution.run_status import RunStatus, finished_status
from corix.execution.simulators import open_simulators
from corix.execution.stopping import RunStopper
from corix.execution.work import WorkItem
from corix.llm import HTTPConnections, LLMClient, ResponseCache
from corix.scenarios import ScenarioPack, pack_record
from corix.storage import (
    Database,
    LeaseLost,
    RecordWriter,
    StorageUnavailable,
    application_conflict,
    completed_work_keys,
    create_run,
    discard_incomplete_sessions,
    ensure_application,
    finish_run,
    get_run,
    holding_run,
    run_packs,
    run_totals,
    set_run_status,
    storage_trouble,
)

__all__ = ["RunResult", "execute_plan"]

logger = logging.getLogger(__name__)


@dataclass
class RunResult:
    run_id: str
    status: RunStatus
    stats: RunSummary
    skipped: int
    discarded: int
    error: str | None = None
    storage_error: str | None = None
    """Why the database stopped taking writes, when that stopped the run (``interrupted``)."""
    taken_over: str | None = None
    """Another process took the run over while this one was paused: this one stopped, and
    its writes since (and the run's end) were refused; the new holder finishes the run."""


def new_run_id() -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"run-{stamp}-{secrets.token_hex(2)}"


async def open_applications(
    plan: Plan,
    db: Database,
    cache: ResponseCache | None = None,
    connections: HTTPConnections | None = None,
) -> dict[str, OpenedApplication]:
    opened: dict[str, OpenedApplication] = {}
    try:
        for entry in plan.applications:
            app = build_application(entry.spec, entry.options, cache=cache, connections=connections)
            await app.open(auth_for(entry))
            version = await app.version()
            public_spec = AdapterSpec.parse(entry.spec).public()
            db_id = ensure_application(
                db, entry.name, public_spec, version=version, new_version=entry.new_version
            )
            opened[entry.name] = OpenedApplication(
                entry.name, public_spec, app, version, db_id, app.declared_system_prompt()
            )
    except BaseException:
        for done in opened.values():
            await done.app.close()
        raise
    return opened


def open_cache(plan: Plan) -> ResponseCache | None:
    """The plan's response cache (a path relative to the plan's folder), or ``None``."""
    if not plan.cache:
        return None
    path = Path(plan.base_dir) / plan.cache
    try:
        return ResponseCache(path)
    except (OSError, sqlite3.Error) as exc:
        raise CorixError(f"cannot open the response cache {path}: {exc}") from None


def model_call_totals(
    applications: Mapping[str, OpenedApplication], simulators: Mapping[str, LLMClient]
) -> RunUsage:
    """Calls, retries and cost through the client layer, by applications and simulators.

    Application tokens are counted from the stored turns; simulator tokens only here.
    """
    app_usage = [u.total for a in applications.values() if (u := a.app.usage()) is not None]
    simulator_usage = [client.usage.snapshot().total for client in simulators.values()]
    every = app_usage + simulator_usage
    return RunUsage(
        model_calls=sum(u.calls for u in every),
        retries=sum(u.retries for u in every),
        waited_s=sum(u.waited_s for u in every),
        cache_hits=sum(u.cache_hits for u in every),
        failed_calls=sum(u.errors for u in every),
        simulator_prompt_tokens=sum(u.prompt_tokens for u in simulator_usage),
        simulator_completion_tokens=sum(u.completion_tokens for u in simulator_usage),
        cost=sum(u.cost for u in every),
    ).rounded()


def describe_error(exc: BaseException) -> str:
    """What stopped a run, in words: the errors inside a task group, not the group."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(dict.fromkeys(describe_error(inner) for inner in exc.exceptions))
    return str(exc) if isinstance(exc, CorixError) else f"{type(exc).__name__}: {exc}"


def run_summary(
    db: Database,
    run_id: str,
    invocations: list[Invocation],
    *,
    error: str | None,
    missing: int,
    refused: list[str],
) -> RunSummary:
    """The whole run's summary: rows counted in the database, usage summed over invocations."""
    return RunSummary(
        **dataclasses.asdict(run_totals(db, run_id)),
        usage=RunUsage.merge(invocation.usage for invocation in invocations).rounded(),
        wall_s=round(sum(invocation.wall_s for invocation in invocations), 6),
        invocations=tuple(invocations),
        error=error,
        missing_sessions=missing,
        refused_records=tuple(refused),
    )


def _refuse_application_conflicts(source: PlanFile, db: Database) -> None:
    """Preflight against the database: a plan application whose name is stored with
    another spec is refused (unless it asks for a new version), and so is one taking the
    name of a web evaluation's application (the run would stop at opening it)."""
    problems = [
        Problem(source.where("applications", index, "name"), conflict)
        for index, entry in enumerate(source.plan.applications)
        if (
            conflict := application_conflict(
                db,
                entry.name,
                AdapterSpec.parse(entry.spec).public(),
                new_version=entry.new_version,
            )
        )
        is not None
    ]
    if problems:
        raise PreflightError(problems)


async def execute_plan(
    plan: Plan | PlanFile,
    db: Database,
    *,
    resume_run: str | None = None,
    on_planned: Callable[[int], None] | None = None,
    on_session_done: Callable[[WorkItem], None] | None = None,
    simulators: Mapping[str, LLMClient] | None = None,
    handle_signals: bool = False,
    executor: RunExecutor | None = None,
) -> RunResult:
    """Run ``plan`` (or finish run ``resume_run``) and return its summary.

    The run's lease is held throughout (``corix.storage.run_lease``): resuming a run that
    a live process holds raises ``RunHeld`` naming it, before anything is changed.

    Preflight problems raise ``PreflightError`` before anything is stored. Resuming drops
    the sessions a stopped run left half-done and runs every work item whose session is not
    complete, so the finished run has each item exactly once. ``simulators`` (keyed by
    level) replace the clients that would be opened for levels played by the LLM engine;
    they stay open, as they belong to the caller. ``handle_signals`` turns SIGINT/SIGTERM
    into a clean stop with status ``interrupted``. ``executor`` runs the work items
    (default: on this event loop).
    """
    with contextlib.ExitStack() as lease, _storage_stops_the_run():
        return await _execute_plan(
            plan,
            db,
            lease,
            resume_run=resume_run,
            on_planned=on_planned,
            on_session_done=on_session_done,
            simulators=simulators,
            handle_signals=handle_signals,
            executor=executor,
        )


async def _execute_plan(
    plan: Plan | PlanFile,
    db: Database,
    lease: contextlib.ExitStack,
    *,
    resume_run: str | None,
    on_planned: Callable[[int], None] | None,
    on_session_done: Callable[[WorkItem], None] | None,
    simulators: Mapping[str, LLMClient] | None,
    handle_signals: bool,
    executor: RunExecutor | None,
) -> RunResult:
    source = plan if isinstance(plan, PlanFile) else PlanFile(plan)
    done: set[str] = set()
    invocations: list[Invocation] = []
    stored_packs: dict[str, ScenarioPack] | None = None
    if resume_run is not None:
        run = get_run(db, resume_run)
        if run.status == RunStatus.CANCELLED:
            raise CorixError(f"run '{run.id}' was cancelled; it cannot be resumed")
        held = lease.enter_context(holding_run(db, run.id, "corix run --resume"))
        source = PlanFile(runnable_plan(run.id, run.plan))
        run_id = run.id
        done = completed_work_keys(db, run_id)
        invocations = list(run.summary.invocations)
        stored_packs = {
            name: record.pack() for (_, name), record in run_packs(db, [run_id]).items()
        }
    else:
        run_id = new_run_id()
    checked = await preflight(source, done=done, packs=stored_packs or None)
    plan = checked.plan
    _refuse_application_conflicts(source, db)
    cache = open_cache(plan)
    executor = executor or LocalRunExecutor()
    executor.prepare()  # a cluster that cannot be reached leaves no run row
    discarded = 0
    if resume_run is None:
        create_run(
            db,
            run_id,
            name=plan.name,
            plan=plan,
            seed=plan.seed,
            packs=[pack_record(pack) for pack in checked.packs.values()],
        )
        held = lease.enter_context(holding_run(db, run_id, "corix run"))
    else:
        discarded = discard_incomplete_sessions(db, run_id)
        set_run_status(db, run_id, RunStatus.RUNNING)
    if on_planned is not None:
        on_planned(checked.planned)
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.perf_counter()
    given = dict(simulators or {})
    # One pool for every client of the run: a dialogue's simulated user and application
    # take turns, so they reuse each other's connections (see HTTPConnections).
    connections = HTTPConnections()
    resources = OwnedResources()  # closed in reverse order, each failure logged by name
    if cache is not None:
        resources.add("the reply cache", cache.close)
    resources.add("the HTTP connections", connections.aclose)
    opened = open_simulators(plan, skip=given, cache=cache, connections=connections)
    for simulated, client in opened.items():
        resources.add(f"the {simulated} simulator's client", client.aclose)
    applications: dict[str, OpenedApplication] = {}
    status = RunStatus.INTERRUPTED  # what the row says if even the cleanup is cut short
    error: str | None = None
    missing = 0  # work items that ran but whose session the database did not keep complete
    stopper = RunStopper(
        lambda: get_run(db, run_id).status == RunStatus.CANCELLED,
        handle_signals=handle_signals,
        deadline_s=plan.deadline_s,
    )
    storage_error: str | None = None
    writer = RecordWriter(
        db,
        on_unavailable=lambda cause: stopper.stop(RunStatus.INTERRUPTED, storage_stop(cause)),
        fence=held.fence,
        on_lost=held.mark_lost,
    )
    loop = asyncio.get_running_loop()

    def stop_when_taken_over(lost: LeaseLost) -> None:
        # This process was paused, then woke to find the run taken over: stop calling
        # models at once (the heartbeat says so from its own thread).
        loop.call_soon_threadsafe(stopper.stop, RunStatus.INTERRUPTED, str(lost))

    held.when_lost(stop_when_taken_over)

    async def open_and_run() -> None:
        # One stoppable unit: a signal while applications open stops the run as well.
        applications.update(await open_applications(plan, db, cache, connections))
        for name, application in applications.items():
            resources.add(f"application '{name}'", application.app.close)
        job = RunJob(
            run_id=run_id,
            fence=held.fence,
            plan=plan,
            packs=checked.packs,
            db=db,
            writer=writer,
            applications=applications,
            simulators={**opened, **given},
            on_session_done=on_session_done,
        )
        await executor.run(job, plan_work(plan, checked.packs, run_id, done))

    try:
        with collected_sparingly():
            await stopper.run(open_and_run())
        if stopper.reason is not None:
            status = stopper.reason
            error = stopper.detail
            storage_error = writer.unavailable
        else:
            totals = run_totals(db, run_id)
            missing = len(done) + checked.planned - len(completed_work_keys(db, run_id))
            status = finished_status(totals.sessions, totals.failed_sessions, missing)
    except LeaseLost as lost:  # raised by the writer, whose last batch was refused
        status, error = RunStatus.INTERRUPTED, str(lost)
    except Exception as exc:  # the run stops; its row says why, the caller gets the result
        logger.debug("run %s failed", run_id, exc_info=True)
        storage_error = storage_trouble(exc)
        if storage_error is not None:
            status, error = RunStatus.INTERRUPTED, storage_stop(storage_error)
        else:
            status, error = RunStatus.FAILED, describe_error(exc)
    finally:
        await resources.aclose()
        usage = [model_call_totals(applications, {**opened, **given}), *executor.remote_usage()]
        invocations.append(
            Invocation(
                status=status.value,
                started_at=started_at,
                usage=RunUsage.merge(usage).rounded(),
                wall_s=round(time.perf_counter() - started, 3),
            )
        )
        summary = run_summary(
            db,
            run_id,
            invocations,
            error=error,
            missing=missing,
            refused=[f"{r.record}: {r.reason}" for r in writer.rejected],
        )
        try:
            finish_run(db, run_id, status, summary, fence=held.fence)
        except LeaseLost as lost:  # only the current holder writes the run's end
            held.mark_lost(lost)
        except SQLAlchemyError as exc:  # the database takes no writes: the run shows stale
            # Said once already when the database stopped the run (``storage_error``).
            level = logging.INFO if storage_error is not None else logging.WARNING
            logger.log(level, "run %s: could not store its end: %s", run_id, exc)
    if status is not RunStatus.CANCELLED and get_run(db, run_id).status == RunStatus.CANCELLED:
        status = RunStatus.CANCELLED  # cancelled while it was finishing
    return RunResult(
        run_id,
        status,
        summary,
        skipped=len(done),
        discarded=discarded,
        error=error,
        storage_error=storage_error,
        taken_over=None if held.lost is None else str(held.lost),
    )


def storage_stop(cause: str) -> str:
    """What stopped a run whose database took no more writes, in words."""
    return f"the database stopped taking writes ({cause}); nothing committed is lost"


@contextlib.contextmanager
def _storage_stops_the_run() -> Iterator[None]:
    """A database that takes no writes before the run starts (or as it ends) is a
    :class:`StorageUnavailable` with its cause, not an internal error."""
    try:
        yield
    except SQLAlchemyError as exc:
        cause = storage_trouble(exc)
        if cause is None:
            raise
        raise StorageUnavailable(cause) from exc
