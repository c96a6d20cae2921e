"""`corix personas RUN`: which simulated-user personas a run covered, and how they fared."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, TypedDict

import typer
from rich.text import Text

from corix.cli.common import (
    DbOption,
    JsonOption,
    WideOption,
    console,
    database,
    print_json,
    wrapping_table,
)
from corix.cli.measure_options import (
    AnnotatorsOption,
    KindsOption,
    SettlingOption,
    SpecOption,
    measurement_spec,
)

if TYPE_CHECKING:
    from corix.domain import JsonObject
    from corix.levels import CoverageRow, PersonaCoverage


_MAX_PARAMETER_CHARS = 48


def personas_command(
    run: Annotated[str, typer.Argument(help="Run id.")],
    spec: SpecOption = None,
    settling: SettlingOption = None,
    annotator: AnnotatorsOption = None,
    kind: KindsOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """Persona coverage: template × parameters, sessions, goals reached and violations.

    Violations are the measurement core's settled guardrail verdicts, per annotator source.
    """
    from corix.levels import persona_coverage
    from corix.measurement import measure
    from corix.storage import get_run

    in_force, source = measurement_spec(spec, settling=settling, annotators=annotator, kinds=kind)
    with database(db) as database_:
        get_run(database_, run)
        measurement = measure(database_, [run], in_force, source=source)
        coverage = persona_coverage(
            database_,
            run,
            measurement.dialogue_verdicts(),
            {dialogue.session_id for dialogue in measurement.not_measurable},
        )
    if as_json:
        print_json({"measurement": measurement.document(), **_as_json(coverage)})
        return
    console.print(Text(measurement.headline(), style="dim"))
    if not coverage.rows:
        console.print(f"run {run} has no red-teaming or field-testing personas")
        return
    table = wrapping_table(
        "level", "scenario", "template", "goal", "parameters", "application", "sessions",
        "goal reached", "not measurable", "annotated", "violations", "strategies / styles",
        title=f"persona coverage of run {run}",
        # Left out first on a narrow terminal: what the other columns imply or repeat.
        optional=(
            "level", "scenario", "goal", "parameters", "not measurable", "annotated",
            "strategies / styles",
        ),
        wide=wide,
    )  # fmt: skip
    for row in coverage.rows:
        table.add_row(*_cells(row))
    console.print(table)
    console.print(_summary(coverage), highlight=False)


def _cells(row: CoverageRow) -> list[Text]:
    # Pack values are shown as plain text: never read as console markup.
    version = f" v{row.template_version}" if row.template_version else ""
    variants = ", ".join(f"{name} {n}" for name, n in sorted(row.variants.items()))
    return [
        Text(row.level.value),
        Text(row.scenario),
        Text(row.template + version),
        Text(row.goal or ""),
        Text(_parameters(row.parameters)),
        Text(row.application),
        Text(str(row.sessions), style="" if row.sessions else "yellow"),
        Text(str(row.goal_reached)),
        Text(str(row.not_measurable), style="yellow" if row.not_measurable else ""),
        Text(_per_source(row.annotated)),
        Text(_per_source(row.violations), style="red" if any(row.violations.values()) else ""),
        Text(variants),
    ]


def _per_source(counts: dict[str, int] | dict[str, float]) -> str:
    return ", ".join(f"{source} {value:g}" for source, value in sorted(counts.items())) or "0"


def _parameters(parameters: JsonObject) -> str:
    text = ", ".join(f"{name}={value}" for name, value in parameters.items())
    # Shortened for a person at a terminal only; a pipe or a file gets every value whole.
    if console.is_terminal and len(text) > _MAX_PARAMETER_CHARS:
        return text[: _MAX_PARAMETER_CHARS - 1] + "…"
    return text


def _summary(coverage: PersonaCoverage) -> str:
    sessions = sum(row.sessions for row in coverage.rows)
    annotated = sum(sum(row.annotated.values()) for row in coverage.rows)
    violations = sum(sum(row.violations.values()) for row in coverage.rows)
    combos = len(coverage.rows)
    ran = f"{coverage.covered} of {combos} persona combinations ran"
    if coverage.declared is None:
        ran = f"{coverage.covered} persona combinations ran (the run's packs could not be loaded)"
    return (
        f"{ran}; {sessions} sessions, {annotated} annotated for risk, "
        f"{violations:g} with a violation (summed over annotator sources)."
    )


class _CoverageJson(TypedDict):
    run_id: str
    covered: int
    combinations: int
    packs_loaded: bool
    rows: list[JsonObject]
    """Each row as its model writes it."""


def _as_json(coverage: PersonaCoverage) -> _CoverageJson:
    return {
        "run_id": coverage.run_id,
        "covered": coverage.covered,
        "combinations": len(coverage.rows),
        "packs_loaded": coverage.declared is not None,
        "rows": [row.model_dump(mode="json") for row in coverage.rows],
    }
