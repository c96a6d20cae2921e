"""A run in waves under a stopping rule, as `corix run PLAN --until …` asks for one.

The rule comes from ``--until`` (with ``--wave``), or, when a sequential run is resumed
without it, from the run's own record, as do its gates and annotators; it is kept in the
run's summary from the first wave on, so a resume goes on under the same rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from corix.domain import SequentialSummary, plan_gates
from corix.errors import ConfigError
from corix.execution import (
    RunRequest,
    RunResult,
    WaveDecision,
    build_executor,
    execute_in_waves,
    plan_to_run,
)
from corix.measurement.sequential import SequentialDecider
from corix.measurement.stopping_rules import StoppingRule, parse_until, stopping_horizon
from corix.storage import Database, get_run

__all__ = ["WavesRequest", "run_in_waves"]

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
