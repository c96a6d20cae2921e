"""`corix demo`: the whole pipeline offline, ending in a report a person opens."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from corix.cli.common import DbOption, console, database
from corix.cli.defects_cmds import print_defect_rates
from corix.cli.judge_notes import print_judge_agreement
from corix.cli.run_cmd import run_with_progress

if TYPE_CHECKING:
    from corix.measurement import SimulationGap

DEMO_GROUPING = ("application", "harm")


def demo_command(
    out: Annotated[Path, typer.Option("--out", help="Folder for the report.")] = Path(
        ".corix/reports"
    ),
    concurrency: Annotated[int, typer.Option(min=1, help="Sessions at once.")] = 16,
    db: DbOption = None,
) -> None:
    """Test, annotate and score the demo applications (one a tool-using agent) offline, then
    write the report."""
    from corix.assessment.annotation_run import annotate_run
    from corix.demo import DEMO_ANNOTATORS, DEMO_DELTA, add_human_like_testers, demo_plan
    from corix.measurement import measure, simulation_gap_per_cell
    from corix.report import write_report

    with database(db, create=True) as database_:
        result = run_with_progress(demo_plan(concurrency=concurrency), database_)
        people = asyncio.run(add_human_like_testers(database_, result.run_id))
        console.print(f"human-like testers: [bold]{people}[/] dialogues in two cells")
        for annotator in DEMO_ANNOTATORS:
            summary = annotate_run(database_, result.run_id, annotator)
            console.print(
                f"annotated with [bold]{annotator}[/]: {summary.passes_stored} passes"
                + (f", {summary.passes_failed} failed" if summary.passes_failed else "")
            )
        measurement = measure(database_, [result.run_id])
        console.print(Text(measurement.headline(), style="dim"))
        rates = measurement.rates(by=DEMO_GROUPING)
        print_defect_rates(
            rates, DEMO_GROUPING, title="defect rates per demo application", compact=True
        )
        print_judge_agreement(measurement.judge_agreement())
        gap = simulation_gap_per_cell(database_, measurement, delta=DEMO_DELTA, replicates=0)
        print_stand_in(gap)
        paths = write_report(
            database_, result.run_id, out / result.run_id, simulation_delta=DEMO_DELTA
        )
    console.print(f"report: [bold]{paths.html.resolve()}[/]")


def print_stand_in(gap: SimulationGap) -> None:
    """One line per cell with human-like testers: does simulation stand in for them?"""
    for cell in gap.cells:
        where = " · ".join(cell.cell[key] for key in ("application", "scenario", "level"))
        verdict = {True: "stands in", False: "does not stand in", None: "undecided"}
        console.print(
            f"simulated vs human-like testers, {where}: simulation "
            f"[bold]{verdict[cell.stands_in]}[/] (δ = {gap.delta:g})"
        )
