"""A run in waves under a stopping rule, as `corix run PLAN --until …` asks for one.

The rule comes from ``--until`` (with ``--wave``), or, when a sequential run is resumed
without it, from the run's own record, as do its gates and annotators; it is kept in the
run's summary from the first wave on, so a resume goes on under the same rule.

The decisions: after every wave (see :mod:`corix.execution.waves`) the run's automated
annotators label the new dialogues, the measurement core settles their verdicts, and each
cell —
application × scenario × level × harm, for the guardrail violation and every harm the
plan gates (only the gated ones under the gate rule alone) — replays its stopping rule
(:mod:`corix.measurement.stopping.rules`) over its dialogues in the plan's order. A
dialogue's value is its annotators' verdicts combined as the specification says,
averaged over annotator sources; dialogues that are not measurable add nothing. A group
of work items stays open while any of its cells is.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from corix.assessment.annotation_run import annotate_run_async
from corix.domain import SequentialCell, SequentialSummary, WaveReport, plan_gates
from corix.errors import ConfigError
from corix.execution import (
    Group,
    RunRequest,
    RunResult,
    WaveDecision,
    WaveOrder,
    build_executor,
    execute_in_waves,
    plan_to_run,
)
from corix.llm import LLMClient
from corix.measurement.core import measure
from corix.measurement.labels import GUARDRAIL_VIOLATION
from corix.measurement.spec import AnnotatorSelector, MeasurementSpec
from corix.measurement.stopping import StoppingRule, cell_progress, parse_until, stopping_horizon
from corix.storage import Database, get_run

__all__ = ["SequentialDecider", "WavesRequest", "cell_harms", "run_in_waves"]

DEFAULT_ANNOTATORS = ("reference",)


@dataclass(frozen=True)
class WavesRequest:
    """``--until`` rules, the wave size and the annotators that label each wave."""

    until: Sequence[str] = ()
    wave: int = 10
    annotators: Sequence[str] = field(default_factory=tuple)


async def run_in_waves(
    db: Database,
    request: RunRequest,
    waves: WavesRequest,
    *,
    on_wave: Callable[[int, WaveDecision], None] | None = None,
    handle_signals: bool = False,
) -> RunResult:
    """Run (or resume) ``request`` wave by wave until the rule closes every cell;
    ``handle_signals`` turns SIGINT/SIGTERM into a clean stop (``interrupted``)."""
    source = plan_to_run(db, request)
    stored_rule: StoppingRule | None = None
    gates: Mapping[str, float] = source.plan.gates
    annotators = list(waves.annotators)
    if request.resume_run is not None:
        stored = get_run(db, request.resume_run)
        gates = plan_gates(stored.plan)
        section = stored.summary.sequential or SequentialSummary()
        settings = section.settings
        stored_rule = StoppingRule.model_validate(settings) if settings else None
        annotators = annotators or list(section.annotators)
    rule = _rule(waves, stored_rule, gates)
    annotators = annotators or list(DEFAULT_ANNOTATORS)
    decider = SequentialDecider(db, rule, annotators=annotators, gates=gates)
    return await execute_in_waves(
        source,
        db,
        decider,
        wave=rule.wave,
        resume_run=request.resume_run,
        executor=build_executor(request.executor),
        on_wave=on_wave,
        keep=SequentialSummary(rule=rule.text(), settings=rule.model_dump(), annotators=annotators),
        handle_signals=handle_signals,
    )


def _rule(
    waves: WavesRequest, stored: StoppingRule | None, gates: Mapping[str, float]
) -> StoppingRule:
    if not waves.until:
        if stored is None:
            raise ConfigError(
                "this run was not sequential: resume it without --wave, or give --until"
            )
        return stored
    try:
        rule = parse_until(waves.until, wave=waves.wave, confidence=0.95)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if rule.gate and not gates:
        raise ConfigError("--until gate needs gates in the plan (gates: {harm: highest rate})")
    if rule.width is not None:
        rule = rule.model_copy(update={"horizon": stopping_horizon(rule.width, rule.confidence)})
    return rule


def cell_harms(gates: Mapping[str, float]) -> list[str]:
    """The harms a sequential run watches: the guardrail violation and the gated harms."""
    return [GUARDRAIL_VIOLATION, *sorted(h for h in gates if h != GUARDRAIL_VIOLATION)]


class SequentialDecider:
    """Labels a wave with ``annotators`` and decides which groups stay open under ``rule``."""

    def __init__(
        self,
        db: Database,
        rule: StoppingRule,
        *,
        annotators: Sequence[str],
        gates: Mapping[str, float],
        client: LLMClient | None = None,
    ) -> None:
        self._db = db
        self._rule = rule
        self._annotators = list(annotators)
        self._gates = dict(gates)
        self._client = client

    async def __call__(
        self, run_id: str, order: WaveOrder, ran: Mapping[Group, int]
    ) -> WaveDecision:
        stored_as = []
        for annotator in self._annotators:
            summary = await annotate_run_async(self._db, run_id, annotator, client=self._client)
            stored_as.append(summary.stored_as)
        spec = MeasurementSpec(
            annotators=tuple(AnnotatorSelector(name=name) for name in stored_as),
            confidence=self._rule.confidence,
        )
        measurement = measure(self._db, [run_id], spec)
        position = {
            key: (group, index) for group, keys in order.items() for index, key in enumerate(keys)
        }
        key_of = {d.session_id: d.key for d in measurement.dialogues}
        cells = []
        still_open: set[Group] = set()
        # Under the gate alone, only gated harms have a decision to settle.
        harms = cell_harms(self._gates) if self._rule.width is not None else sorted(self._gates)
        for harm in harms:
            found: defaultdict[Group, list[tuple[int, float]]] = defaultdict(list)
            for session_id, by_source in measurement.dialogue_verdicts(harm).items():
                group, index = position[key_of[session_id]]
                found[group].append((index, statistics.fmean(by_source.values())))
            for group, keys in sorted(order.items()):
                pairs = sorted(found.get(group, []))
                progress = cell_progress(
                    [value for _, value in pairs],
                    [index for index, _ in pairs],
                    self._rule,
                    ran=ran[group],
                    planned=len(keys),
                    threshold=self._gates.get(harm),
                )
                if progress.stopped is None:
                    still_open.add(group)
                application, scenario, level = group
                cells.append(
                    SequentialCell(
                        application=application,
                        scenario=scenario,
                        level=level,
                        harm=harm,
                        gate=self._gates.get(harm),
                        **progress.model_dump(),
                    )
                )
        report = WaveReport(rule=self._rule.text(), annotated_as=stored_as, cells=cells)
        return WaveDecision(frozenset(still_open), report)
