"""`corix agreement`: agreement between annotators or groups, on a file or a run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from corix.cli.common import (
    DbOption,
    JsonOption,
    WideOption,
    console,
    database,
    fail,
    print_json,
    wrapping_table,
)
from corix.cli.measure_options import SettlingOption, SpecOption, measurement_spec

if TYPE_CHECKING:
    from corix.assessment.agreement import AgreementReport


def _groups(values: Sequence[str] | None) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for value in values or ():
        name, sep, members = value.partition("=")
        listed = [m.strip() for m in members.split(",") if m.strip()]
        if not sep or not name.strip() or not listed:
            raise fail(f"--group expects NAME=annotator,annotator…, got '{value}'")
        groups[name.strip()] = listed
    return groups


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


LabelsArgument = Annotated[
    Path | None,
    typer.Argument(help="CSV/JSONL of item_id,annotator,value[,question_id]."),
]
SideAOption = Annotated[str, typer.Option("--a", help="One side: an annotator or a group.")]
SideBOption = Annotated[str, typer.Option("--b", help="The other side.")]
RunOption = Annotated[
    str | None, typer.Option(help="Compare a run's stored annotations instead of a file.")
]
QuestionOption = Annotated[
    str | None, typer.Option(help="Only this question (harm severities: harm:<pack>).")
]
GroupOption = Annotated[
    list[str] | None,
    typer.Option("--group", help="NAME=annotator,annotator… (repeatable)."),
]
NominalOption = Annotated[
    bool,
    typer.Option(
        help="Compare numeric labels as unordered categories (by default numbers are "
        "ordinal: ±1 ratio, weighted κ, ordinal α)."
    ),
]


def agreement_command(
    labels: LabelsArgument = None,
    a: SideAOption = "",
    b: SideBOption = "",
    run: RunOption = None,
    question: QuestionOption = None,
    group: GroupOption = None,
    nominal: NominalOption = False,
    spec: SpecOption = None,
    settling: SettlingOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """Agreement between two annotators or groups: exact/±1 ratio, confusion, κ, α.

    On a run, each side's labels are settled by the measurement specification in force
    (--spec/--settling), which is printed first."""
    from corix.assessment.agreement import compare_labels, read_labels
    from corix.measurement import measure
    from corix.storage import get_run

    if not a or not b:
        raise fail("give both sides: --a NAME --b NAME")
    if (labels is None) == (run is None):
        raise fail("give either a LABELS file or --run RUN")
    groups = _groups(group)
    headline = None
    if labels is not None:
        rows = read_labels(labels)
        reports = compare_labels(rows, a, b, groups=groups, question=question, nominal=nominal)
    else:
        in_force, source = measurement_spec(spec, settling=settling)
        with database(db) as database_:
            get_run(database_, str(run))
            measurement = measure(database_, [str(run)], in_force, source=source)
        reports = measurement.agreement(a, b, groups=groups, question=question, nominal=nominal)
        headline = measurement.headline()
    if as_json:
        print_json([report.model_dump(mode="json") for report in reports])
        return
    if headline is not None:
        console.print(Text(headline, style="dim"))
    _print_agreement(reports, wide=wide)


def _print_agreement(reports: list[AgreementReport], *, wide: bool) -> None:
    # On a narrow terminal the other kind of label's scores go first, then the one-sided
    # counts: ordinal labels keep ±1, quadratic κ and ordinal α; nominal ones plain κ, α.
    ordinal = any(report.ordinal for report in reports)
    other_kind = ("κ", "α nominal") if ordinal else ("±1", "κ quadratic", "α ordinal")
    table = wrapping_table(
        "question",
        "items",
        "only a",
        "only b",
        "exact",
        "±1",
        "κ",
        "κ quadratic",
        "α nominal",
        "α ordinal",
        optional=("only a", "only b", *other_kind),
        wide=wide,
    )
    for report in reports:
        table.add_row(
            Text(report.question_id or "—"),
            str(report.n_items),
            str(report.n_only_a),
            str(report.n_only_b),
            _score(report.exact_agreement),
            _score(report.relaxed_agreement),
            _score(report.cohen_kappa),
            _score(report.cohen_kappa_quadratic),
            _score(report.alpha_nominal),
            _score(report.alpha_ordinal),
        )
    console.print(table)
    if len(reports) == 1 and reports[0].labels:
        report = reports[0]
        headers = [f"{report.a} ↓ / {report.b} →", *(str(label) for label in report.labels)]
        matrix = wrapping_table(*headers, title="confusion matrix")
        for label, counts in zip(report.labels, report.confusion, strict=True):
            matrix.add_row(Text(str(label)), *(str(count) for count in counts))
        console.print(matrix)
