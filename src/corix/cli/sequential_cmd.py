"""`corix run PLAN --until …`: a sequential run that stops each cell once it is answered."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from corix.cli.common import console, wrapping_table

if TYPE_CHECKING:
    from corix.execution import RunRequest, RunResult, WaveDecision
    from corix.measurement import WavesRequest
    from corix.storage import Database


__all__ = ["run_sequential"]


def run_sequential(db: Database, request: RunRequest, waves: WavesRequest) -> RunResult:
    """Run (or resume) in waves, printing each wave's decision, then the cells."""
    from corix.execution import run_stoppable
    from corix.measurement import run_in_waves

    work = run_in_waves(db, request, waves, on_wave=_print_wave, handle_signals=True)
    result = run_stoppable(work)
    _print_cells(db, result)
    return result


def _print_wave(index: int, decision: WaveDecision) -> None:
    open_cells = sum(1 for cell in decision.report.cells if cell.stopped is None)
    console.print(
        Text(f"after wave {index}: {open_cells} cell(s) open, {len(decision.open)} group(s) go on"),
        highlight=False,
    )


def _print_cells(db: Database, result: RunResult) -> None:
    from corix.measurement import sequential_records

    records = sequential_records(db, [result.run_id])
    if not records or not records[0].cells:
        return
    record = records[0]
    plans = record.fixed_plans
    if plans is not None:
        console.print(Text(plans.text(), style="bold"), highlight=False)
    table = wrapping_table(
        "application",
        "scenario",
        "level",
        "harm",
        "n",
        "interval",
        "stopped",
        "fixed plan at first-wave rate",
        title="cells",
        keys=("application", "scenario", "level"),
    )
    for cell in record.cells:
        table.add_row(
            Text(cell.application),
            Text(cell.scenario),
            Text(cell.level),
            Text(cell.harm),
            str(cell.n),
            f"{cell.low:.1%}–{cell.high:.1%}",
            Text(cell.stopped_text()),
            "—"
            if cell.fixed_plan is None or cell.first_wave_rate is None
            else f"{cell.fixed_plan} (rate {cell.first_wave_rate:.1%})",
        )
    console.print(table)
    console.print(Text(record.rule, style="dim"))
