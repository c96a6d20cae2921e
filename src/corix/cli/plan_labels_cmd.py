"""`corix plan labels`: which dialogues people should label next (formats the core's plan)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from corix.cli.common import (
    DbOption,
    JsonOption,
    console,
    database,
    fail,
    print_json,
    wrapping_table,
)
from corix.cli.defects_cmds import measured
from corix.cli.measure_options import (
    SeedOption,
    SeriesOption,
    SettlingOption,
    SpecOption,
    measurement_spec,
)

if TYPE_CHECKING:
    from corix.measurement import Measurement
    from corix.measurement.sizing import LabelPlan
    from corix.storage import Database

ByOption = Annotated[
    str,
    typer.Option(
        "--by",
        help="The cells the judge's error is measured in: application, scenario, level "
        "(comma list). Read the corrected rates with the same --by.",
    ),
]
OutOption = Annotated[
    Path | None, typer.Option("--out", help="Write the plan (JSON) to this file.")
]
GateOption = Annotated[
    float | None,
    typer.Option(
        "--gate",
        min=0.0,
        max=1.0,
        help="A gate's maximum rate: cells whose corrected interval holds it count more "
        "(default: the strictest gate the runs' plans set on the harm).",
    ),
]
AssignOption = Annotated[
    bool, typer.Option("--assign", help="Make the plan the web series' annotation selection.")
]


def labels_command(
    run: Annotated[str | None, typer.Argument(help="Run id (or --series NAME).")] = None,
    series: SeriesOption = None,
    annotator: Annotated[
        str, typer.Option("--annotator", help="The judge source whose rates to correct.")
    ] = "llm",
    reference: Annotated[
        str, typer.Option("--reference", help="The trusted source that labels.")
    ] = "human",
    budget: Annotated[int, typer.Option("--budget", min=1, help="Dialogues to label.")] = 50,
    harm: Annotated[
        str | None, typer.Option("--harm", help="The harm (default: guardrail)")
    ] = None,
    by: ByOption = "application,scenario,level",
    out: OutOption = None,
    assign: AssignOption = False,
    gate: GateOption = None,
    spec: SpecOption = None,
    settling: SettlingOption = None,
    seed: SeedOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Choose the dialogues whose labels narrow the judge's corrected intervals most.

    Labels go to the cells and judge-verdict strata where they narrow the cells' intervals
    most in proportion; the table says how far each cell's interval should shrink.
    """
    from corix.measurement import GUARDRAIL_VIOLATION
    from corix.measurement.sizing import plan_labels
    from corix.storage.web.selection import assign_label_plan

    in_force, source = measurement_spec(spec, settling=settling, seed=seed)
    harm = harm or GUARDRAIL_VIOLATION
    with database(db) as database_:
        measurement = measured(database_, run, series, in_force, source)
        plan = plan_labels(
            measurement,
            judge=annotator,
            reference=reference,
            budget=budget,
            harm=harm,
            by=_cells(by),
            seed=measurement.spec.spec.seed,
            gate=gate if gate is not None else _plans_gate(database_, measurement, harm),
        )
        chosen = [d.session_id for d in plan.dialogues]
        assigned = (
            assign_label_plan(database_, chosen, series=series, run_id=run) if assign else None
        )
    if assign and assigned is None:
        raise fail("--assign needs a web series (the run is in none); the plan was not stored")
    if out is not None:
        out.write_text(json.dumps(_document(plan), indent=2) + "\n")
    if as_json:
        print_json({"measurement": measurement.document(), "label_plan": _document(plan)})
    else:
        console.print(Text(measurement.headline(), style="dim"))
        print_label_plan(plan, assigned)


def _plans_gate(db: Database, measurement: Measurement, harm: str) -> float | None:
    """The strictest gate the measured runs' plans set on ``harm``: the one whose verdict
    the labels may change first."""
    from corix.domain import plan_gates
    from corix.storage import get_run

    gates = [plan_gates(get_run(db, run_id).plan).get(harm) for run_id in measurement.run_ids]
    return min((gate for gate in gates if gate is not None), default=None)


def _cells(by: str) -> tuple[str, ...]:
    from corix.measurement.sizing import BY_COLUMNS

    keys = {key.strip() for key in by.split(",") if key.strip()}
    if not keys or not keys <= set(BY_COLUMNS):
        raise fail(f"--by takes {', '.join(BY_COLUMNS)}, not '{by}'")
    return tuple(key for key in BY_COLUMNS if key in keys)


def _document(plan: LabelPlan) -> dict[str, object]:
    document = plan.model_dump(mode="json")
    for cell, shown in zip(plan.cells, document["cells"], strict=True):
        shown["shrink"] = cell.shrink
    return document


def _gate_note(plan: LabelPlan) -> str:
    if plan.gate is None:
        return ""
    return (
        f" Gate {plan.gate:.1%}: a cell whose corrected interval holds it is 'gate "
        "undecided' and counts twice."
    )


def _width(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def print_label_plan(plan: LabelPlan, assigned: str | None) -> None:
    """One row per cell: the labels it has and gets, its interval's width now and after."""
    if not plan.cells:
        console.print(f"no dialogues rated by '{plan.judge}' for {plan.harm}")
        return
    table = wrapping_table(
        *plan.by,
        f"judged ({plan.judge} yes)",
        f"{plan.reference} labels: yes / no",
        "add: yes / no",
        "corrected",
        "width now",
        "expected",
        "shrink",
        title=f"{len(plan.dialogues)} dialogues for '{plan.reference}' to label ({plan.harm})",
        keys=plan.by,
    )
    for cell in plan.cells:
        rate = "—" if cell.corrected_rate is None else f"{cell.corrected_rate:.1%}"
        table.add_row(
            *(Text(cell.group[key]) for key in plan.by),
            f"{cell.judged} ({cell.judge_yes})",
            f"{cell.labelled_yes} / {cell.labelled_no}",
            f"{cell.add_yes} / {cell.add_no}",
            rate,
            _width(cell.width_now),
            _width(cell.width_expected),
            ("—" if cell.shrink is None else f"{cell.shrink:.0%}")
            + (" (gate undecided)" if cell.undecided_gate else ""),
        )
    console.print(table)
    where = (
        f"The web series '{assigned}' now offers these dialogues to its annotators."
        if assigned
        else "--assign makes them the web series' annotation selection; --out writes them."
    )
    console.print(
        Text(
            f"Rule: {plan.rule}. 'yes' / 'no': the judge's verdict. Expected width: the "
            "corrected interval's width now × the cell's standard deviation after ÷ now "
            f"(the same information).{_gate_note(plan)} {where}",
            style="dim",
        )
    )
