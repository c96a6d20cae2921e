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
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from corix.apps import AdapterSpec, build_application
from corix.domain import (
    Invocation,
    JsonObject,
    Plan,
    PlanFile,
    RunSummary,
    RunUsage,
    runnable_plan,
)
from corix.errors import CorixError
from corix.execution._preflight import CheckedPlan, PreflightError, Problem, preflight
from corix.execution.collector import collected_sparingly
from corix.execution.context import OpenedApplication
from corix.execution.executors import LocalRunExecutor, RunExecutor, RunJob
from corix.execution.resources import OwnedResources
from corix.execution.run_planning import plan_run
from corix.execution.run_status import RunStatus, finished_status
from corix.execution.run_stopper import RunStopper
from corix.execution.simulators import open_simulators
from corix.execution.work import WorkItem
from corix.llm import HTTPConnections, LLMClient, ResponseCache
from corix.scenarios import ScenarioPack, pack_record
from corix.storage import (
    Database,
    Lease,
    LeaseLost,
    RecordWriter,
    RunTotals,
    StorageUnavailable,
    application_conflict,
    completed_work_keys,
    count_completed_work,
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
    owned: OwnedResources,
    credentials: Mapping[str, JsonObject | None],
    cache: ResponseCache | None = None,
    connections: HTTPConnections | None = None,
) -> dict[str, OpenedApplication]:
    """Open the plan's applications; ``owned`` closes each from the moment it is open."""
    opened: dict[str, OpenedApplication] = {}
    for entry in plan.applications:
        app = build_application(entry.spec, entry.options, cache=cache, connections=connections)
        await app.open(credentials[entry.name])
        owned.add(f"application '{entry.name}'", app.close)
        version = await app.version()
        public_spec = AdapterSpec.parse(entry.spec).public()
        db_id = ensure_application(
            db, entry.name, public_spec, version=version, new_version=entry.new_version
        )
        opened[entry.name] = OpenedApplication(
            entry.name, public_spec, app, version, db_id, app.declared_system_prompt()
        )
    return opened


def open_clients(
    plan: Plan,
    owned: OwnedResources,
    cache: ResponseCache | None,
    given: Mapping[str, LLMClient],
) -> tuple[HTTPConnections, dict[str, LLMClient]]:
    """The run's pool of connections and its simulators' clients (``given`` ones included,
    which stay the caller's); ``owned`` closes the ones opened here."""
    # One pool for every client of the run: a dialogue's simulated user and application
    # take turns, so they reuse each other's connections (see HTTPConnections).
    connections = HTTPConnections()
    owned.add("the HTTP connections", connections.aclose)
    opened = open_simulators(plan, skip=given, cache=cache, connections=connections)
    for simulated, client in opened.items():
        owned.add(f"the {simulated} simulator's client", client.aclose)
    return connections, {**opened, **given}


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
    totals: RunTotals | None = None,
) -> RunSummary:
    """The whole run's summary: rows counted in the database (``totals``, when counted
    since the last write), usage summed over invocations."""
    return RunSummary(
        **dataclasses.asdict(totals or run_totals(db, run_id)),
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

    Everything the run holds is on one exit stack (:class:`OwnedResources`), unwound in
    reverse order: the applications, the simulators' clients and the connections close
    (a failing close is logged with its component's name), then the run's end is stored,
    then the lease is released and the reply cache closed.
    """
    source = plan if isinstance(plan, PlanFile) else PlanFile(plan)
    executor = executor or LocalRunExecutor()
    with _storage_stops_the_run():
        async with OwnedResources() as owned:
            if resume_run is None:
                started = await _new_run(source, db, owned, executor)
            else:
                started = await _resumed_run(db, resume_run, owned, executor)
            end = _RunEnd(db, started, executor, handle_signals)
            owned.callback(end.record)  # after what opens below has closed
            if on_planned is not None:
                on_planned(started.checked.planned)
            await _run(started, db, owned, end, simulators or {}, on_session_done)
        return end.result()


@dataclass
class _Started:
    """A run that passed preflight, whose row exists and whose lease is held."""

    run_id: str
    checked: CheckedPlan
    held: Lease
    cache: ResponseCache | None
    done: set[str] = field(default_factory=set)
    """The work keys a resumed run already completed."""
    invocations: list[Invocation] = field(default_factory=list)
    """The earlier invocations of a resumed run."""
    discarded: int = 0
    """Half-done sessions a resumed run dropped."""


async def _prepared(
    source: PlanFile,
    db: Database,
    owned: OwnedResources,
    executor: RunExecutor,
    *,
    done: set[str],
    packs: dict[str, ScenarioPack] | None,
) -> tuple[CheckedPlan, ResponseCache | None]:
    """Everything checked and reached before a run is stored or resumed, so that a plan
    that cannot run leaves no trace: preflight, the stored applications, the reply cache
    (on ``owned``) and what the executor runs on."""
    checked = await preflight(source, done=done, packs=packs)
    _refuse_application_conflicts(source, db)
    cache = open_cache(checked.plan)
    if cache is not None:
        owned.add("the reply cache", cache.close)
    executor.prepare()  # a cluster that cannot be reached leaves no run row
    return checked, cache


async def _new_run(
    source: PlanFile, db: Database, owned: OwnedResources, executor: RunExecutor
) -> _Started:
    checked, cache = await _prepared(source, db, owned, executor, done=set(), packs=None)
    plan, run_id = checked.plan, new_run_id()
    create_run(
        db,
        run_id,
        name=plan.name,
        plan=plan,
        seed=plan.seed,
        packs=[pack_record(pack) for pack in checked.packs.values()],
    )
    held = owned.enter_context(holding_run(db, run_id, "corix run"))
    return _Started(run_id, checked, held, cache)


async def _resumed_run(
    db: Database, run_id: str, owned: OwnedResources, executor: RunExecutor
) -> _Started:
    """Run ``run_id`` again from what it stored: its plan, its packs, its completed work."""
    run = get_run(db, run_id)
    if run.status == RunStatus.CANCELLED:
        raise CorixError(f"run '{run.id}' was cancelled; it cannot be resumed")
    held = owned.enter_context(holding_run(db, run.id, "corix run --resume"))
    done = completed_work_keys(db, run.id)
    packs = {name: record.pack() for (_, name), record in run_packs(db, [run.id]).items()}
    source = PlanFile(runnable_plan(run.id, run.plan))
    checked, cache = await _prepared(source, db, owned, executor, done=done, packs=packs or None)
    discarded = discard_incomplete_sessions(db, run.id)
    set_run_status(db, run.id, RunStatus.RUNNING)
    return _Started(run.id, checked, held, cache, done, list(run.summary.invocations), discarded)


async def _run(
    started: _Started,
    db: Database,
    owned: OwnedResources,
    end: _RunEnd,
    given: Mapping[str, LLMClient],
    on_session_done: Callable[[WorkItem], None] | None,
) -> None:
    """Open the clients and applications (on ``owned``) and run the work items, settling
    ``end`` with how the run stopped."""
    plan = started.checked.plan
    connections, end.simulators = open_clients(plan, owned, started.cache, given)

    async def open_and_run() -> None:
        # One stoppable unit: a signal while applications open stops the run as well.
        planned = plan_run(plan, started.checked.packs, started.run_id, started.done)
        end.applications = await open_applications(
            plan, db, owned, planned.credentials, started.cache, connections
        )
        job = RunJob(
            run_id=started.run_id,
            fence=started.held.fence,
            plan=plan,
            packs=started.checked.packs,
            db=db,
            writer=end.writer,
            applications=end.applications,
            simulators=end.simulators,
            on_session_done=on_session_done,
        )
        await end.executor.run(job, planned.work)

    await end.settle(open_and_run())


class _RunEnd:
    """How a run stopped, and its row's end: :meth:`record` stores it whatever happened
    (the exit stack calls it once what the run opened has closed, so usage is final)."""

    def __init__(
        self, db: Database, started: _Started, executor: RunExecutor, handle_signals: bool
    ) -> None:
        self.db, self.started, self.executor = db, started, executor
        run_id, held = started.run_id, started.held
        self.stopper = RunStopper(
            lambda: get_run(db, run_id).status == RunStatus.CANCELLED,
            handle_signals=handle_signals,
            deadline_s=started.checked.plan.deadline_s,
        )
        self.writer = RecordWriter(
            db,
            on_unavailable=lambda cause: self.stopper.stop(
                RunStatus.INTERRUPTED, storage_stop(cause)
            ),
            fence=held.fence,
            on_lost=held.mark_lost,
        )
        loop = asyncio.get_running_loop()

        def stop_when_taken_over(lost: LeaseLost) -> None:
            # This process was paused, then woke to find the run taken over: stop calling
            # models at once (the heartbeat says so from its own thread).
            loop.call_soon_threadsafe(self.stopper.stop, RunStatus.INTERRUPTED, str(lost))

        held.when_lost(stop_when_taken_over)
        self.applications: dict[str, OpenedApplication] = {}
        self.simulators: dict[str, LLMClient] = {}
        self.status = RunStatus.INTERRUPTED  # what the row says if even the cleanup is cut short
        self.error: str | None = None
        self.storage_error: str | None = None
        self.missing = 0  # work items that ran but whose session the database did not keep
        self.totals: RunTotals | None = None
        """The rows counted once the work ended (its writer closed), when it ended whole."""
        self.summary: RunSummary | None = None
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._started = time.perf_counter()

    async def settle(self, work: Awaitable[None]) -> None:
        """Run ``work`` until it ends or is stopped, and say how the run ended."""
        db, run_id, stopper = self.db, self.started.run_id, self.stopper
        try:
            with collected_sparingly():
                await stopper.run(work)
            if stopper.reason is not None:
                self.status, self.error = stopper.reason, stopper.detail
                self.storage_error = self.writer.unavailable
            else:
                totals = self.totals = run_totals(db, run_id)
                planned = len(self.started.done) + self.started.checked.planned
                self.missing = planned - count_completed_work(db, run_id)
                self.status = finished_status(totals.sessions, totals.failed_sessions, self.missing)
        except LeaseLost as lost:  # raised by the writer, whose last batch was refused
            self.status, self.error = RunStatus.INTERRUPTED, str(lost)
        except Exception as exc:  # the run stops; its row says why, the caller gets the result
            logger.debug("run %s failed", run_id, exc_info=True)
            self.storage_error = storage_trouble(exc)
            if self.storage_error is not None:
                self.status = RunStatus.INTERRUPTED
                self.error = storage_stop(self.storage_error)
            else:
                self.status, self.error = RunStatus.FAILED, describe_error(exc)

    def record(self) -> None:
        """Store the run's end: this invocation, the summary counted from the database."""
        started, held = self.started, self.started.held
        usage = [model_call_totals(self.applications, self.simulators)]
        started.invocations.append(
            Invocation(
                status=self.status.value,
                started_at=self._started_at,
                usage=RunUsage.merge([*usage, *self.executor.remote_usage()]).rounded(),
                wall_s=round(time.perf_counter() - self._started, 3),
            )
        )
        self.summary = run_summary(
            self.db,
            started.run_id,
            started.invocations,
            error=self.error,
            missing=self.missing,
            refused=[f"{r.record}: {r.reason}" for r in self.writer.rejected],
            totals=self.totals,
        )
        try:
            finish_run(self.db, started.run_id, self.status, self.summary, fence=held.fence)
        except LeaseLost as lost:  # only the current holder writes the run's end
            held.mark_lost(lost)
        except SQLAlchemyError as exc:  # the database takes no writes: the run shows stale
            # Said once already when the database stopped the run (``storage_error``).
            level = logging.INFO if self.storage_error is not None else logging.WARNING
            logger.log(level, "run %s: could not store its end: %s", started.run_id, exc)

    def result(self) -> RunResult:
        started, status = self.started, self.status
        assert self.summary is not None, "the run's end is recorded before its result"
        if status is not RunStatus.CANCELLED and (
            get_run(self.db, started.run_id).status == RunStatus.CANCELLED
        ):
            status = RunStatus.CANCELLED  # cancelled while it was finishing
        return RunResult(
            started.run_id,
            status,
            self.summary,
            skipped=len(started.done),
            discarded=started.discarded,
            error=self.error,
            storage_error=self.storage_error,
            taken_over=None if started.held.lost is None else str(started.held.lost),
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
