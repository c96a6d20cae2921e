"""`corix run PLAN --until …`: a sequential run that stops each cell once it is answered."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from corix.cli.common import console, fail, wrapping_table

if TYPE_CHECKING:
    from corix.execution import ExecutorSettings, PlanFile, RunResult, WaveDecision
    from corix.measurement.stopping_rules import StoppingRule
    from corix.storage import Database


__all__ = ["run_sequential"]


def run_sequential(
    source: PlanFile | None,
    db: Database,
    *,
    until: Sequence[str],
    wave: int,
    annotators: Sequence[str],
    resume_run: str | None,
    executor: ExecutorSettings,
) -> RunResult:
    """Run (or resume) a plan in waves under the ``--until`` rule; a resumed sequential run
    without ``--until`` keeps the rule it started with."""
    from corix.execution import Plan, PlanFile, build_executor, execute_in_waves
    from corix.measurement import SequentialDecider
    from corix.measurement.stopping_rules import StoppingRule
    from corix.storage import get_run

    stored_rule: StoppingRule | None = None
    gates = source.plan.gates if source is not None else {}
    if resume_run is not None:
        stored = get_run(db, resume_run)
        gates = dict(stored.plan.get("gates") or {})
        section = stored.summary.sequential or {}
        settings = section.get("settings")
        stored_rule = StoppingRule.model_validate(settings) if settings else None
        annotators = annotators or section.get("annotators", [])
    rule = _rule(until, wave, stored_rule, gates)
    annotators = list(annotators) or ["reference"]
    decider = SequentialDecider(db, rule, annotators=annotators, gates=gates)
    if source is None:
        assert resume_run is not None  # no plan file means a resume
        source = PlanFile(Plan.model_validate(get_run(db, resume_run).plan))
    result = asyncio.run(
        execute_in_waves(
            source,
            db,
            decider,
            wave=rule.wave,
            resume_run=resume_run,
            executor=build_executor(executor),
            on_wave=_print_wave,
            keep={
                "rule": rule.text(),
                "settings": rule.model_dump(),
                "annotators": annotators,
            },
        )
    )
    _print_cells(result)
    return result


def _rule(
    until: Sequence[str],
    wave: int,
    stored: StoppingRule | None,
    gates: dict[str, float],
) -> StoppingRule:
    from corix.measurement.stopping_rules import parse_until, stopping_horizon

    if not until:
        if stored is None:
            raise fail("this run was not sequential: resume it without --wave, or give --until")
        return stored
    try:
        rule = parse_until(until, wave=wave, confidence=0.95)
    except ValueError as exc:
        raise fail(str(exc)) from None
    if rule.gate and not gates:
        raise fail("--until gate needs gates in the plan (gates: {harm: highest rate})")
    if rule.width is not None:
        rule = rule.model_copy(update={"horizon": stopping_horizon(rule.width, rule.confidence)})
    return rule


def _print_wave(index: int, decision: WaveDecision) -> None:
    open_cells = sum(1 for cell in decision.report.get("cells", []) if cell["stopped"] is None)
    console.print(
        Text(f"after wave {index}: {open_cells} cell(s) open, {len(decision.open)} group(s) go on"),
        highlight=False,
    )


def _print_cells(result: RunResult) -> None:
    sequential = result.stats.sequential or {}
    cells = sequential.get("cells", [])
    if not cells:
        return
    table = wrapping_table(
        "application", "scenario", "level", "harm", "n", "interval", "stopped", title="cells"
    )
    for cell in cells:
        table.add_row(
            Text(cell["application"]),
            Text(cell["scenario"]),
            Text(cell["level"]),
            Text(cell["harm"]),
            str(cell["n"]),
            f"{cell['low']:.1%}–{cell['high']:.1%}",
            Text(cell["stopped"] or "open"),
        )
    console.print(table)
    console.print(Text(sequential.get("rule", ""), style="dim"))
