"""`corix validity`: how far simulated testers stand in for people (formats the core's figures)."""

from __future__ import annotations

from collections.abc import Callable
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
    AnnotatorsOption,
    DeltaOption,
    GroupByOption,
    KindsOption,
    SeedOption,
    SeriesOption,
    SettlingOption,
    SpecOption,
    measurement_spec,
)

if TYPE_CHECKING:
    from corix.measurement import CorrectedRate, SimulationGap

validity_app = typer.Typer(help="Validity: simulated testers against people.")


@validity_app.command("sim")
def sim_command(
    run: Annotated[str | None, typer.Argument(help="Run id (or --series NAME).")] = None,
    series: SeriesOption = None,
    delta: DeltaOption = 0.10,  # the core's DEFAULT_DELTA (corix.measurement.simulation.gap)
    spec: SpecOption = None,
    settling: SettlingOption = None,
    group_annotators_by: GroupByOption = None,
    annotator: AnnotatorsOption = None,
    kind: KindsOption = None,
    seed: SeedOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Human against simulated testers in every application × scenario × level with both.

    Per harm: each kind's defect rate and their difference with its interval; dialogue
    features with a two-sample test and an effect size; whether simulation stands in.
    """
    from corix.measurement import simulation_gap_per_cell

    in_force, source = measurement_spec(
        spec,
        settling=settling,
        group_by=group_annotators_by,
        annotators=annotator,
        kinds=kind,
        seed=seed,
    )
    with database(db) as database_:
        measurement = measured(database_, run, series, in_force, source)
        gap = simulation_gap_per_cell(database_, measurement, delta=delta)
    if as_json:
        print_json({"measurement": measurement.document(), **gap.model_dump(mode="json")})
        return
    console.print(Text(measurement.headline(), style="dim"))
    print_simulation_gap(gap)


def print_simulation_gap(gap: SimulationGap) -> None:
    """One block per cell: the rates side by side, then the features."""
    if not gap.cells:
        console.print(
            "no application × scenario × level has both human and simulated dialogues to compare"
        )
        return
    for at in range(len(gap.cells)):
        _print_cell(gap, at)
    console.print(
        Text(
            f"human testers: sessions of source {', '.join(gap.human_sources)}; simulated: "
            f"{', '.join(gap.simulated_sources)} (scripted and imported take no part). "
            f"{gap.rule}. Differences: simulated − human, {gap.difference_interval}; each "
            "rate's interval resamples testers as clusters. Feature tests treat dialogues "
            "as independent. A template's distance: the mean |Cliff's delta| of its "
            "dialogues against the human testers' over turns and user message length.",
            style="dim",
        )
    )


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _points(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:+.1f} pts"


def _verdict(stands_in: bool | None) -> str:
    return {True: "yes", False: "no", None: "undecided (no rate to compare)"}[stands_in]


def _print_cell(gap: SimulationGap, at: int) -> None:
    cell = gap.cells[at]
    where = " · ".join(cell.cell[k] for k in ("application", "scenario", "level"))
    confidence = f"{gap.confidence:.0%} CI"
    rates = wrapping_table(
        "annotators",
        "harm",
        "human (n)",
        confidence,
        "simulated (n)",
        f"{confidence} ",
        "difference",
        f"{confidence}  ",
        f"within ±{gap.delta:g}",
        keys=("annotators", "harm"),
        title=(
            f"{where}: {cell.human_dialogues} human dialogues ({cell.human_testers} testers), "
            f"{cell.simulated_dialogues} simulated ({cell.simulated_testers} testers); "
            f"simulation stands in: {_verdict(cell.stands_in)}"
        ),
    )
    for r in cell.rates:
        rates.add_row(
            Text(r.group.get("source") or r.group.get("annotator") or "all"),
            Text(r.group["harm"]),
            f"{_percent(r.human.rate)} ({r.human.n})",
            _interval(r.human.ci_low, r.human.ci_high, _percent),
            f"{_percent(r.simulated.rate)} ({r.simulated.n})",
            _interval(r.simulated.ci_low, r.simulated.ci_high, _percent),
            _points(r.difference),
            _interval(r.ci_low, r.ci_high, _points),
            "—" if r.within_delta is None else ("yes" if r.within_delta else "no"),
        )
    console.print(rates)
    _print_features_and_templates(gap, at)


def _print_features_and_templates(gap: SimulationGap, at: int) -> None:
    cell = gap.cells[at]
    features = wrapping_table(
        "feature", "summary", "human (n)", "simulated (n)", "test", "p", "effect size"
    )
    for f in cell.features:
        features.add_row(
            Text(f.feature),
            f.summary,
            f"{f.human:.3g} ({f.human_n})",
            f"{f.simulated:.3g} ({f.simulated_n})",
            f.test,
            f"{f.p_value:.3g}",
            f"{f.effect:+.2f} ({f.effect_size})",
        )
    console.print(features)
    templates = wrapping_table(
        "persona template",
        "dialogues",
        "distance",
        *(f"{feature} (Cliff's delta)" for feature in _template_features(gap, at)),
        title="persona templates, closest to the human testers first",
    )
    for t in cell.templates:
        templates.add_row(
            Text(t.template),
            str(t.dialogues),
            f"{t.distance:.2f}",
            *(f"{effect:+.2f}" for effect in t.effects.values()),
        )
    console.print(templates)
    _print_calibration(gap, at)


def _print_calibration(gap: SimulationGap, at: int) -> None:
    cell = gap.cells[at]
    calibration = cell.calibration
    if calibration is None:
        return
    if calibration.effective_n is None:
        console.print(Text(f"calibrated simulation: {calibration.note}", style="dim"))
        return
    weights = ", ".join(f"{t} {w:.0%}" for t, w in calibration.template_weights.items())
    table = wrapping_table(
        "annotators",
        "harm",
        "human",
        "simulated, raw (CI)",
        f"calibrated ({gap.confidence:.0%} CI)",
        keys=("annotators", "harm"),
        title=(
            f"calibrated simulation on {', '.join(calibration.features)}: template weights "
            f"{weights}; effective n {calibration.effective_n:.1f} of "
            f"{calibration.simulated_dialogues} simulated dialogues"
            + (
                f" (not balanced: {', '.join(calibration.left_out)})"
                if calibration.left_out
                else ""
            )
        ),
    )
    for r, c in zip(cell.rates, calibration.rates, strict=True):
        table.add_row(
            Text(r.group.get("source") or r.group.get("annotator") or "all"),
            Text(r.group["harm"]),
            _percent(r.human.rate),
            f"{_percent(r.simulated.rate)} ({_interval(r.simulated.ci_low, r.simulated.ci_high)})",
            f"{_percent(c.calibrated_rate)} ({_interval(c.ci_low, c.ci_high)})",
        )
    console.print(table)
    console.print(
        Text(
            f"calibrated: {calibration.method}; {calibration.replicates} replicates, "
            f"{calibration.unmatched_replicates} could not match and were dropped.",
            style="dim",
        )
    )


def _template_features(gap: SimulationGap, at: int) -> list[str]:
    templates = gap.cells[at].templates
    return list(templates[0].effects) if templates else []


def _interval(
    low: float | None, high: float | None, shown: Callable[[float], str] = _percent
) -> str:
    return "—" if low is None or high is None else f"{shown(low)} to {shown(high)}"


JudgeByOption = Annotated[
    str,
    typer.Option(
        "--by", help="Measure the judge's error per: application, scenario, level (comma list)."
    ),
]


@validity_app.command("judge")
def judge_command(
    run: Annotated[str | None, typer.Argument(help="Run id (or --series NAME).")] = None,
    series: SeriesOption = None,
    judge: Annotated[str, typer.Option("--judge", help="The judged source.")] = "llm",
    reference: Annotated[
        str, typer.Option("--reference", help="The trusted source it is checked against.")
    ] = "human",
    by: JudgeByOption = "application",
    spec: SpecOption = None,
    settling: SettlingOption = None,
    seed: SeedOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """The judge's validity per harm: its sensitivity and specificity against the trusted
    source, with intervals, beside its raw and corrected rates."""
    keys = tuple(key.strip() for key in by.split(",") if key.strip())
    wrong = [key for key in keys if key not in _JUDGE_KEYS]
    if wrong or not keys:
        raise fail(f"--by takes {', '.join(_JUDGE_KEYS)}, not '{by}'")
    keys = tuple(key for key in _JUDGE_KEYS if key in keys)
    in_force, source = measurement_spec(spec, settling=settling, seed=seed)
    with database(db) as database_:
        measurement = measured(database_, run, series, in_force, source)
        rates = measurement.judge_corrected(judge, reference, by=keys)
    if as_json:
        print_json(
            {
                "measurement": measurement.document(),
                "judge_validity": [rate.model_dump(mode="json") for rate in rates],
            }
        )
        return
    console.print(Text(measurement.headline(), style="dim"))
    print_judge_validity(rates, keys, judge, reference)


_JUDGE_KEYS = ("application", "scenario", "level")


def print_judge_validity(
    rates: list[CorrectedRate], keys: tuple[str, ...], judge: str, reference: str
) -> None:
    """Sensitivity and specificity with intervals beside the raw and corrected rates."""
    if not rates:
        console.print(f"no dialogues rated by '{judge}' to check against '{reference}'")
        return
    table = wrapping_table(
        "harm",
        *keys,
        "raw",
        "sensitivity (CI)",
        "specificity (CI)",
        f"pairs ({reference} defects)",
        "corrected (CI)",
        "warning",
        title=f"judge '{judge}' against '{reference}'",
        keys=("harm", *keys),
    )
    for r in rates:
        corrected = f"{_percent(r.corrected_rate)} ({_interval(r.ci_low, r.ci_high)})"
        if r.note is not None:
            corrected = f"{corrected}; {r.note}"
        table.add_row(
            Text(r.group["harm"]),
            *(Text(r.group[key]) for key in keys),
            _percent(r.raw_rate),
            f"{_percent(r.sensitivity)} ({_interval(r.sensitivity_low, r.sensitivity_high)})",
            f"{_percent(r.specificity)} ({_interval(r.specificity_low, r.specificity_high)})",
            f"{r.n_calibration} ({r.calibration_defects})",
            Text(corrected),
            "below accuracy" if r.below_accuracy else "",
        )
    console.print(table)
    console.print(
        Text(
            f"sensitivity and specificity of '{judge}' on the dialogues '{reference}' also "
            f"labelled; intervals: {rates[0].accuracy_interval}. 'below accuracy': "
            f"sensitivity or specificity under {rates[0].accuracy_floor:.0%}, so its raw "
            f"rates are not the {reference} rates. Corrected: "
            f"{'; '.join(sorted({r.method for r in rates}))}.",
            style="dim",
        )
    )
