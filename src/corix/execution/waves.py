"""Running a plan in waves, so that each cell stops once its question is answered.

A *group* is an application × scenario × level: the work items that make its dialogues,
in the plan's order. Each wave runs, for every open group, the next ``wave`` items (or
finishes a wave a stopped run left half-done); then ``decide`` — which labels the new
dialogues and reads their intervals, layers above this one — says which groups stay
open. Every wave is one invocation of :func:`execute_plan` on the same run (the first
creates it, the others resume it), so resume, the executors and the run's accounting
work as for any run; a sequential run stopped midway resumes with
:func:`execute_in_waves` and ``resume_run``, replaying its decisions from the stored
record. The run's summary gets a ``sequential`` section: the rule and each cell's count.
"""

from __future__ import annotations

import asyncio
import math
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field

from corix.domain import (
    Plan,
    PlanFile,
    RunUsage,
    SequentialSummary,
    WaveReport,
    runnable_plan,
)
from corix.execution._preflight import preflight
from corix.execution.executors import LocalRunExecutor, RunExecutor, RunJob
from corix.execution.run_planning import plan_work
from corix.execution.run_status import RunStatus, finished_status
from corix.execution.run_stopper import RunStopper
from corix.execution.runner import RunResult, execute_plan
from corix.execution.work import WorkItem
from corix.storage import Database, completed_work_keys, finish_run, get_run, run_packs, run_totals

__all__ = ["Group", "WaveDecision", "WaveOrder", "execute_in_waves", "group_of"]

Group = tuple[str, str, str]
"""(application, scenario, level)."""

WaveOrder = Mapping[Group, list[str]]
"""Each group's work keys in the plan's order."""


def group_of(item: WorkItem) -> Group:
    return (item.application, item.scenario, item.level.value)


@dataclass(frozen=True)
class WaveDecision:
    """The groups still open after a wave, and what to store about the cells."""

    open: frozenset[Group]
    report: WaveReport


Decide = Callable[[str, WaveOrder, Mapping[Group, int]], Awaitable[WaveDecision]]
"""(run id, the order, items run per group) → the decision after a wave."""


class _Selected:
    """An executor that runs only the work items ``keep`` allows (this wave's)."""

    def __init__(self, inner: RunExecutor, keep: frozenset[str]) -> None:
        self._inner = inner
        self._keep = keep

    def prepare(self) -> None:
        self._inner.prepare()

    async def run(self, job: RunJob, work: Iterable[WorkItem]) -> None:
        await self._inner.run(job, (item for item in work if item.key in self._keep))

    def remote_usage(self) -> list[RunUsage]:
        return self._inner.remote_usage()


async def execute_in_waves(
    plan: Plan | PlanFile,
    db: Database,
    decide: Decide,
    *,
    wave: int,
    resume_run: str | None = None,
    executor: RunExecutor | None = None,
    on_wave: Callable[[int, WaveDecision], None] | None = None,
    keep: SequentialSummary | None = None,
    handle_signals: bool = False,
) -> RunResult:
    """Run ``plan`` (or go on with the sequential run ``resume_run``) wave by wave until
    ``decide`` closes every group or the plan's items run out. ``keep`` starts the
    summary's ``sequential`` section, stored from the first wave on (the rule, for resume).
    ``handle_signals`` turns SIGINT/SIGTERM, during a wave or between two, into a clean
    stop with status ``interrupted``."""
    source = plan if isinstance(plan, PlanFile) else PlanFile(plan)
    if resume_run is not None:
        stored = get_run(db, resume_run)
        source = PlanFile(runnable_plan(stored.id, stored.plan))
        packs = {name: record.pack() for (_, name), record in run_packs(db, [resume_run]).items()}
        checked = await preflight(source, packs=packs)
    else:
        checked = await preflight(source)
    order: defaultdict[Group, list[str]] = defaultdict(list)
    for item in plan_work(checked.plan, checked.packs, "order", set()):
        order[group_of(item)].append(item.key)
    progress = _Progress(resume_run, frozenset(order), keep or SequentialSummary())
    waves = _Waves(db, source, order, decide, wave, executor or LocalRunExecutor(), on_wave)
    try:
        return await waves.run(progress, handle_signals=handle_signals)
    except asyncio.CancelledError:
        # Stopped from outside, between the steps that stop cleanly: the run is not left
        # looking finished (or ``running``), and keeps its rule for the resume.
        if progress.run_id is not None:
            _stopped(db, progress.run_id, RunStatus.INTERRUPTED, progress)
        raise


@dataclass
class _Progress:
    """Where a sequential run is: its id once created, the groups the last decision left
    open, its section so far, items run."""

    run_id: str | None
    open: frozenset[Group]
    section: SequentialSummary
    ran: Mapping[Group, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _Waves:
    """A sequential run's loop: judge the last wave, run the next, until nothing is open."""

    db: Database
    source: PlanFile
    order: WaveOrder
    decide: Decide
    wave: int
    executor: RunExecutor
    on_wave: Callable[[int, WaveDecision], None] | None

    async def run(self, progress: _Progress, *, handle_signals: bool) -> RunResult:
        db, order = self.db, self.order
        result: RunResult | None = None
        index = 0
        previous: frozenset[str] = frozenset()
        while True:
            run_id = progress.run_id
            done = completed_work_keys(db, run_id) if run_id is not None else set()
            progress.ran = {group: _ran(keys, done) for group, keys in order.items()}
            if run_id is not None:
                deciding = self.decide(run_id, order, progress.ran)
                decided = await _decided(db, run_id, deciding, handle_signals)
                if isinstance(decided, RunStatus):  # stopped while the wave was judged
                    return _stopped(db, run_id, decided, progress)
                progress.open = decided.open
                progress.section = progress.section.after(decided.report)
                _store_progress(db, run_id, progress)
                if self.on_wave is not None:
                    self.on_wave(index, decided)
            wanted = self._wanted(progress, done)
            if not wanted or wanted == previous:  # nothing left, or items that will not complete
                break
            previous = wanted
            index += 1
            result = await execute_plan(
                self.source,
                db,
                resume_run=run_id,
                executor=_Selected(self.executor, wanted),
                handle_signals=handle_signals,
            )
            progress.run_id = result.run_id
            # An invocation writes the run's summary afresh: put the sequential section back.
            _store_progress(db, result.run_id, progress)
            if result.status in (RunStatus.INTERRUPTED, RunStatus.CANCELLED, RunStatus.FAILED):
                return result
        assert progress.run_id is not None  # the first wave always runs: every group starts open
        return _finish(db, progress.run_id, progress, result)

    def _wanted(self, progress: _Progress, done: set[str]) -> frozenset[str]:
        """The next wave's items: each open group's, up to its next whole wave."""
        return frozenset(
            key
            for group in progress.open
            for key in self.order[group][
                : _target(progress.ran[group], len(self.order[group]), self.wave)
            ]
            if key not in done
        )


async def _decided(
    db: Database, run_id: str, deciding: Awaitable[WaveDecision], handle_signals: bool
) -> WaveDecision | RunStatus:
    """The decision after a wave, or why it was stopped before it was made (a signal, or
    ``corix runs cancel``): the wave's labels may take as long as the wave did."""
    decided: list[WaveDecision] = []

    async def decide() -> None:
        decided.append(await deciding)

    stopper = RunStopper(
        lambda: get_run(db, run_id).status == RunStatus.CANCELLED, handle_signals=handle_signals
    )
    await stopper.run(decide())
    return decided[0] if stopper.reason is None else stopper.reason


def _stopped(db: Database, run_id: str, status: RunStatus, progress: _Progress) -> RunResult:
    """A run stopped between two waves: ``interrupted`` (a resume goes on under the same
    rule, from its stored section) unless it was cancelled. As in :func:`_finish`, the
    items no wave has asked for yet are not missing sessions."""
    stored = get_run(db, run_id)
    summary = stored.summary.model_copy(
        update={"missing_sessions": 0, "sequential": _sequential(progress)}
    )
    finish_run(db, run_id, status.value, summary)
    ended = RunStatus(get_run(db, run_id).status)  # a cancelled run stays cancelled
    return RunResult(run_id, ended, summary, skipped=0, discarded=0, error=None)


def _ran(keys: list[str], done: set[str]) -> int:
    """Items of a group run so far: the length of its done prefix and any done beyond."""
    return sum(1 for key in keys if key in done)


def _target(ran: int, planned: int, wave: int) -> int:
    """Items a group should have after this wave: the next whole wave (finishing a wave
    a stopped run left half-done first)."""
    return min(planned, (math.floor(ran / wave) + 1) * wave)


def _sequential(progress: _Progress) -> SequentialSummary:
    per_group = {"/".join(group): n for group, n in sorted(progress.ran.items())}
    return progress.section.model_copy(update={"dialogues_per_group": per_group})


def _store_progress(db: Database, run_id: str, progress: _Progress) -> None:
    """The decision so far, in the run's summary: a resumed run reads its rule there."""
    stored = get_run(db, run_id)
    summary = stored.summary.model_copy(update={"sequential": _sequential(progress)})
    finish_run(db, run_id, stored.status, summary)


def _finish(db: Database, run_id: str, progress: _Progress, result: RunResult | None) -> RunResult:
    """The run's status without the items the rule never needed, and its ``sequential``
    section; a run stopped short of them is complete, not missing sessions."""
    stored = get_run(db, run_id)
    summary = stored.summary.model_copy(
        update={"missing_sessions": 0, "sequential": _sequential(progress)}
    )
    totals = run_totals(db, run_id)
    status = finished_status(totals.sessions, totals.failed_sessions)
    finish_run(db, run_id, status.value, summary)
    skipped = result.skipped if result is not None else 0
    return RunResult(run_id, status, summary, skipped=skipped, discarded=0, error=None)
