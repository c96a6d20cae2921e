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

import math
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from corix.domain import RunUsage
from corix.execution._preflight import preflight
from corix.execution.executors import LocalRunExecutor, RunExecutor, RunJob
from corix.execution.plan import Plan, PlanFile
from corix.execution.run_planning import plan_work
from corix.execution.run_status import RunStatus, finished_status
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
    report: dict[str, Any]


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
    keep: Mapping[str, Any] | None = None,
) -> RunResult:
    """Run ``plan`` (or go on with the sequential run ``resume_run``) wave by wave until
    ``decide`` closes every group or the plan's items run out. ``keep`` is stored in the
    summary's ``sequential`` section from the first wave on (e.g. the rule, for resume)."""
    kept = dict(keep or {})
    source = plan if isinstance(plan, PlanFile) else PlanFile(plan)
    if resume_run is not None:
        stored = get_run(db, resume_run)
        source = PlanFile(Plan.model_validate(stored.plan))
        packs = {name: record.pack() for (_, name), record in run_packs(db, [resume_run]).items()}
        checked = await preflight(source, packs=packs)
    else:
        checked = await preflight(source)
    order: defaultdict[Group, list[str]] = defaultdict(list)
    for item in plan_work(checked.plan, checked.packs, "order", set()):
        order[group_of(item)].append(item.key)
    inner = executor or LocalRunExecutor()
    run_id = resume_run
    result: RunResult | None = None
    decision = WaveDecision(frozenset(order), kept)
    index = 0
    previous: frozenset[str] = frozenset()
    while True:
        done = completed_work_keys(db, run_id) if run_id is not None else set()
        ran = {group: _ran(keys, done) for group, keys in order.items()}
        if run_id is not None:
            decided = await decide(run_id, order, ran)
            decision = WaveDecision(decided.open, {**kept, **decided.report})
            _store_progress(db, run_id, decision, ran)
            if on_wave is not None:
                on_wave(index, decision)
        wanted = frozenset(
            key
            for group in decision.open
            for key in order[group][: _target(ran[group], len(order[group]), wave)]
            if key not in done
        )
        if not wanted or wanted == previous:  # nothing left, or items that will not complete
            break
        previous = wanted
        index += 1
        result = await execute_plan(
            source, db, resume_run=run_id, executor=_Selected(inner, wanted)
        )
        run_id = result.run_id
        # An invocation writes the run's summary afresh: put the sequential section back.
        _store_progress(db, run_id, decision, ran)
        if result.status in (RunStatus.INTERRUPTED, RunStatus.CANCELLED, RunStatus.FAILED):
            return result
    assert run_id is not None  # the first wave always runs: every group starts open
    return _finish(db, run_id, decision, ran, result)


def _ran(keys: list[str], done: set[str]) -> int:
    """Items of a group run so far: the length of its done prefix and any done beyond."""
    return sum(1 for key in keys if key in done)


def _target(ran: int, planned: int, wave: int) -> int:
    """Items a group should have after this wave: the next whole wave (finishing a wave
    a stopped run left half-done first)."""
    return min(planned, (math.floor(ran / wave) + 1) * wave)


def _sequential(decision: WaveDecision, ran: Mapping[Group, int]) -> dict[str, Any]:
    return {
        **decision.report,
        "dialogues_per_group": {"/".join(group): n for group, n in sorted(ran.items())},
    }


def _store_progress(
    db: Database, run_id: str, decision: WaveDecision, ran: Mapping[Group, int]
) -> None:
    """The decision so far, in the run's summary: a resumed run reads its rule there."""
    stored = get_run(db, run_id)
    summary = stored.summary.model_copy(update={"sequential": _sequential(decision, ran)})
    finish_run(db, run_id, stored.status, summary)


def _finish(
    db: Database,
    run_id: str,
    decision: WaveDecision,
    ran: Mapping[Group, int],
    result: RunResult | None,
) -> RunResult:
    """The run's status without the items the rule never needed, and its ``sequential``
    section; a run stopped short of them is complete, not missing sessions."""
    stored = get_run(db, run_id)
    summary = stored.summary.model_copy(
        update={"missing_sessions": 0, "sequential": _sequential(decision, ran)}
    )
    totals = run_totals(db, run_id)
    status = finished_status(totals.sessions, totals.failed_sessions)
    finish_run(db, run_id, status.value, summary)
    skipped = result.skipped if result is not None else 0
    return RunResult(run_id, status, summary, skipped=skipped, discarded=0, error=None)
