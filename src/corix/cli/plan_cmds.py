"""`corix plan size PLAN`: how many dialogues each cell of a plan needs."""

from __future__ import annotations

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
from corix.cli.outputs import telling_what_was_left

if TYPE_CHECKING:
    from corix.domain import Plan
    from corix.measurement.sizing import CellSize, SizeRequest


plan_app = typer.Typer(help="Plans: dialogues a question needs, and which to label next.")


WidthOption = Annotated[
    float | None,
    typer.Option("--width", min=0.001, max=0.999, help="Interval width wanted per cell."),
]
DifferenceOption = Annotated[
    float | None,
    typer.Option(
        "--difference",
        min=0.001,
        max=0.999,
        help="Difference in rate between two applications to detect.",
    ),
]
AssuranceOption = Annotated[
    float,
    typer.Option(
        "--assurance",
        min=0.5,
        max=0.99,
        help="Chance that the reported interval meets --width (default 0.8).",
    ),
]
PowerOption = Annotated[
    float,
    typer.Option("--power", min=0.01, max=0.99, help="Chance of detecting --difference."),
]
AlphaOption = Annotated[
    float, typer.Option("--alpha", min=0.0001, max=0.5, help="Family-wise error (Holm).")
]
ConfidenceOption = Annotated[
    float, typer.Option("--confidence", min=0.5, max=0.999, help="The intervals' confidence.")
]
RateOption = Annotated[
    float | None,
    typer.Option(
        "--rate",
        min=0.0,
        max=1.0,
        help="Assumed defect rate (default: the cell's rate in --from RUN, else 0.5).",
    ),
]
IccOption = Annotated[
    float | None,
    typer.Option(
        "--icc",
        min=0.0,
        max=1.0,
        help="Intra-tester correlation of verdicts (default: from --from RUN, else 0).",
    ),
]
PerTesterOption = Annotated[
    float | None,
    typer.Option(
        "--per-tester", min=1.0, help="Dialogues per tester (default: from --from RUN, else 1)."
    ),
]
FromRunOption = Annotated[
    str | None,
    typer.Option("--from", help="An earlier run to take rates and clustering from."),
]
WriteOption = Annotated[
    Path | None,
    typer.Option("--write", help="Write the plan with these counts to this YAML file."),
]


@plan_app.command("size")
def size_command(
    plan: Annotated[Path, typer.Argument(help="Plan YAML file.")],
    width: WidthOption = None,
    assurance: AssuranceOption = 0.8,
    difference: DifferenceOption = None,
    power: PowerOption = 0.8,
    alpha: AlphaOption = 0.05,
    confidence: ConfidenceOption = 0.95,
    rate: RateOption = None,
    icc: IccOption = None,
    per_tester: PerTesterOption = None,
    from_run: FromRunOption = None,
    write: WriteOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Dialogues per cell (application × scenario × level × harm) for an interval width
    and/or the power to tell two applications apart, with testers' design effect."""
    from corix.config import write_atomically
    from corix.domain import load_plan_file
    from corix.measurement import measure
    from corix.measurement.sizing import SizeRequest, earlier_run, plan_with_sizes, size_plan
    from corix.storage import get_run

    if width is None and difference is None:
        raise fail("give --width, --difference or both")
    source = load_plan_file(plan)
    request = SizeRequest(
        width=width,
        assurance=assurance,
        difference=difference,
        power=power,
        alpha=alpha,
        confidence=confidence,
        rate=rate,
        icc=icc,
        per_tester=per_tester,
    )
    earlier = None
    if from_run is not None:
        with database(db) as database_:
            get_run(database_, from_run)
            earlier = earlier_run(database_, measure(database_, [from_run]))
    cells = size_plan(source.plan, request, earlier)
    if write is not None:
        sized = plan_with_sizes(source.plan, cells, _model_tests(source.plan))
        with telling_what_was_left(write):
            write_atomically(write, _plan_yaml(sized, plan.read_text(encoding="utf-8")))
    if as_json:
        print_json(
            {"request": request.model_dump(mode="json"), "cells": [c.model_dump() for c in cells]}
        )
        return
    _print_cells(cells, request)
    if write is not None:
        console.print(f"plan with these counts: {write}", soft_wrap=True)


def _model_tests(plan: Plan) -> dict[str, int]:
    """Scripted tests per scenario that a model-testing cell draws from."""
    from corix.scenarios import expand_model_tests, resolve_pack

    found = {}
    settings = next((s for level, s in plan.levels.items() if level.value == "model_testing"), None)
    if settings is None:
        return {}
    for scenario in plan.scenarios:
        tests = len(expand_model_tests(resolve_pack(plan.resolve_scenario(scenario)), plan.seed))
        found[scenario] = min(tests, settings.sessions) if settings.sessions else tests
    return found


_DEFAULT_COUNTS = {"sessions": None, "repeats": 1}
"""What a level means without the key (``LevelSettings``'s defaults)."""


def _plan_yaml(sized: Plan, text: str) -> str:
    """The plan's own text with the sized counts put in: its comments, key order, quoting
    and layout kept (a round-trip YAML load and dump)."""
    from io import StringIO

    from ruamel.yaml import YAML

    round_trip = YAML()
    round_trip.preserve_quotes = True
    round_trip.indent(mapping=2, sequence=4, offset=2)  # lists as the docs write them
    document = round_trip.load(text)
    for level, settings in sized.levels.items():
        entry = document["levels"][level.value]
        if entry is None:  # `field_testing:` with nothing under it
            entry = document["levels"][level.value] = {}
        for name in ("sessions", "repeats"):
            value = getattr(settings, name)
            if value is not None and entry.get(name, _DEFAULT_COUNTS[name]) != value:
                entry[name] = value
    written = StringIO()
    round_trip.dump(document, written)
    return written.getvalue()


def _print_cells(cells: list[CellSize], request: SizeRequest) -> None:
    table = wrapping_table(
        "application",
        "scenario",
        "level",
        "harm",
        "rate",
        "design effect",
        "n (width)",
        "n (power)",
        "n",
        title="dialogues per cell",
        keys=("application", "scenario", "level"),
    )
    for c in cells:
        table.add_row(
            Text(c.application),
            Text(c.scenario),
            Text(c.level),
            Text(c.harm),
            Text(f"{c.rate:.1%} ({c.rate_from})"),
            f"{c.design_effect:.2f}",
            "—" if c.n_width is None else str(c.n_width),
            "—" if c.n_power is None else str(c.n_power),
            str(c.n),
        )
    console.print(table)
    first = cells[0]
    notes = [f"design effect 1 + (m − 1)·ICC with m = {first.per_tester:g}, ICC = {first.icc:.3f}"]
    if first.width_promise is not None:
        promises = sorted({c.width_promise for c in cells if c.width_promise})
        notes.append(f"n (width): {' · '.join(promises)}")
    if request.difference is not None:
        notes.append(
            f"power: {request.power:.0%} to detect +{request.difference:g} per application pair, "
            f"two-sided z-test at {request.alpha:g}/{first.comparisons} (Holm's first step)"
        )
    console.print(Text("; ".join(notes), style="dim"))
