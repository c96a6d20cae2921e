"""`corix defects`: defect rates with intervals and counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer
from rich.text import Text

from corix.assessment.defects import DEFAULT_GROUPING, DefectRate, GroupKey, IntervalMethod
from corix.assessment.run_results import compute_defect_rates
from corix.cli.common import (
    DbOption,
    JsonOption,
    RunArgument,
    console,
    database,
    fail,
    print_json,
    wrapping_table,
)
from corix.storage import Repository


def _grouping(by: str) -> tuple[GroupKey, ...]:
    keys = tuple(key.strip() for key in by.split(",") if key.strip())
    unknown = [key for key in keys if key not in DEFAULT_GROUPING]
    if unknown:
        raise fail(f"unknown grouping '{unknown[0]}'; choose from {', '.join(DEFAULT_GROUPING)}")
    return tuple(key for key in DEFAULT_GROUPING if key in keys)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def defects_command(
    run: RunArgument,
    annotator: Annotated[
        str | None, typer.Option(help="Only this annotator (as stored, e.g. llm:gpt-4o).")
    ] = None,
    by: Annotated[
        str, typer.Option(help="Grouping keys: application,scenario,harm,level.")
    ] = ",".join(DEFAULT_GROUPING),
    method: Annotated[IntervalMethod, typer.Option(help="Confidence interval.")] = (
        IntervalMethod.WILSON
    ),
    confidence: Annotated[float, typer.Option(min=0.5, max=0.999)] = 0.95,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Defect rates per annotator × application × scenario × harm × level, with counts."""
    grouping = _grouping(by)
    with database(db) as database_:
        Repository(database_).get_run(run)
        rates = compute_defect_rates(
            database_,
            run,
            annotator=annotator,
            by=grouping,
            method=method,
            confidence=confidence,
        )
    if as_json:
        print_json([rate.model_dump(mode="json") for rate in rates])
        return
    if not rates:
        console.print("no annotations to rate yet; run `corix annotate` first")
        return
    print_defect_rates(rates, grouping, confidence=confidence, method=method)


def print_defect_rates(
    rates: Sequence[DefectRate],
    grouping: Sequence[str],
    *,
    confidence: float = 0.95,
    method: IntervalMethod = IntervalMethod.WILSON,
    title: str | None = None,
    compact: bool = False,
) -> None:
    """A table of defect rates with their counts and intervals.

    ``compact`` leaves out the annotator, missing counts and value source, for a summary.
    """
    interval_header = f"{confidence:.0%} CI ({method})"
    if compact:
        table = wrapping_table(*grouping, "defects / n", "rate", interval_header, title=title)
    else:
        table = wrapping_table(
            "annotator",
            *grouping,
            "defects",
            "n",
            "missing",
            "rate",
            interval_header,
            "values from",
            title=title,
        )
    for rate in rates:
        interval = (
            "—" if rate.ci_low is None else f"{_percent(rate.ci_low)}–{_percent(rate.ci_high)}"
        )
        groups = [Text(str(rate.group.get(key) or "—")) for key in grouping]
        if compact:
            table.add_row(*groups, f"{rate.defects} / {rate.n}", _percent(rate.rate), interval)
            continue
        table.add_row(
            Text(str(rate.group["annotator"])),
            *groups,
            str(rate.defects),
            str(rate.n),
            str(rate.n_missing),
            _percent(rate.rate),
            interval,
            Text(str(rate.group["value_from"])),
        )
    console.print(table)
