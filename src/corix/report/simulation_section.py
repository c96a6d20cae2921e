"""The report's section on simulated against human testers: the core's simulation gap per
cell (:func:`corix.measurement.simulation_gap_per_cell`), formatted once as rows of text for
the HTML and the Markdown report."""

from __future__ import annotations

from collections.abc import Callable

from corix.measurement import SimulationGap
from corix.report.formatting import EMPTY, p_value, percent, percent_interval, words

RATE_HEADER = (
    "Annotators",
    "Harm",
    "Human",
    "Simulated",
    "Difference",
    "Within ±δ",
    "Calibrated simulated",
)
FEATURE_HEADER = ("Feature", "Human (n)", "Simulated (n)", "Test", "p", "Effect size")

__all__ = [
    "FEATURE_HEADER",
    "RATE_HEADER",
    "calibration_line",
    "cell_title",
    "feature_rows",
    "rate_rows",
    "section_note",
    "simulation_markdown",
    "templates_line",
]


def cell_title(gap: SimulationGap, at: int) -> str:
    cell = gap.cells[at]
    verdict = {True: "stands in", False: "does not stand in", None: "undecided"}[cell.stands_in]
    where = " · ".join(words(cell.cell[key]) for key in ("application", "scenario", "level"))
    return (
        f"{where}: simulation {verdict} ({cell.human_dialogues} human dialogues by "
        f"{cell.human_testers} testers, {cell.simulated_dialogues} simulated by "
        f"{cell.simulated_testers})"
    )


def _points(value: float | None) -> str:
    return EMPTY if value is None else f"{value * 100:+.1f} pts"


def rate_rows(gap: SimulationGap, at: int) -> list[list[str]]:
    """Per annotator group and harm: each kind's rate, the difference, the calibrated rate."""
    cell = gap.cells[at]
    calibrated = cell.calibration.rates if cell.calibration is not None else []
    rows = []
    for at, r in enumerate(cell.rates):
        difference = _points(r.difference)
        if r.ci_low is not None and r.ci_high is not None:
            difference += f" ({_points(r.ci_low)} to {_points(r.ci_high)})"
        c = calibrated[at] if at < len(calibrated) else None
        rows.append(
            [
                r.group.get("source") or r.group.get("annotator") or "all",
                words(r.group["harm"]),
                f"{percent(r.human.rate, 1)} {percent_interval(r.human.ci_low, r.human.ci_high)}",
                f"{percent(r.simulated.rate, 1)} "
                f"{percent_interval(r.simulated.ci_low, r.simulated.ci_high)}",
                difference,
                EMPTY if r.within_delta is None else ("yes" if r.within_delta else "no"),
                EMPTY
                if c is None or c.calibrated_rate is None
                else f"{percent(c.calibrated_rate, 1)} {percent_interval(c.ci_low, c.ci_high)}",
            ]
        )
    return rows


def feature_rows(gap: SimulationGap, at: int) -> list[list[str]]:
    cell = gap.cells[at]
    return [
        [
            f.feature,
            f"{f.summary} {f.human:.3g} ({f.human_n})",
            f"{f.summary} {f.simulated:.3g} ({f.simulated_n})",
            f.test,
            p_value(f.p_value),
            f"{f.effect:+.2f} ({f.effect_size})",
        ]
        for f in cell.features
    ]


def templates_line(gap: SimulationGap, at: int) -> str:
    cell = gap.cells[at]
    if not cell.templates:
        return ""
    closest, furthest = cell.templates[0], cell.templates[-1]
    return (
        f"Persona templates closest to the human testers: {closest.template} (distance "
        f"{closest.distance:.2f}, {_dialogues(closest.dialogues)}); furthest: "
        f"{furthest.template} ({furthest.distance:.2f}, {_dialogues(furthest.dialogues)})."
    )


def _dialogues(n: int) -> str:
    return f"{n} dialogue{'' if n == 1 else 's'}"


def calibration_line(gap: SimulationGap, at: int) -> str:
    cell = gap.cells[at]
    calibration = cell.calibration
    if calibration is None:
        return ""
    if calibration.effective_n is None:
        return f"Calibrated simulation: {calibration.note}."
    weights = ", ".join(f"{t} {w:.0%}" for t, w in calibration.template_weights.items())
    return (
        f"Calibrated simulation on {', '.join(calibration.features)}: template weights "
        f"{weights}; effective n {calibration.effective_n:.1f} of "
        f"{calibration.simulated_dialogues} simulated dialogues "
        f"({calibration.unmatched_replicates} of {calibration.replicates} bootstrap "
        "replicates could not match and were dropped)."
        + (f" Not balanced: {', '.join(calibration.left_out)}." if calibration.left_out else "")
    )


def section_note(gap: SimulationGap) -> str:
    method = gap.cells[0].calibration.method if gap.cells[0].calibration else ""
    return (
        f"Human testers against simulated ones in every application × scenario × level with "
        f"both. Rule: {gap.rule}. Differences: simulated − human, {gap.difference_interval}; "
        "each rate's interval resamples testers as clusters. Calibrated: "
        f"{method or 'no feature to reweight on'}. Feature tests treat dialogues as "
        "independent. Where simulation does not stand in, its rates are not the people's."
    )


def simulation_markdown(
    gap: SimulationGap,
    md: Callable[[object], str],
    table: Callable[[list[str], list[list[str]]], list[str]],
) -> list[str]:
    """The section as Markdown lines; ``md`` escapes text, ``table`` lays out a table."""
    lines = ["## Simulated against human testers", "", md(section_note(gap)), ""]
    for at in range(len(gap.cells)):
        lines += [f"### {md(cell_title(gap, at))}", ""]
        rows = [[md(v) for v in row] for row in rate_rows(gap, at)]
        lines += table(list(RATE_HEADER), rows)
        for line in (calibration_line(gap, at), templates_line(gap, at)):
            if line:
                lines += [md(line), ""]
        rows = [[md(v) for v in row] for row in feature_rows(gap, at)]
        lines += table(list(FEATURE_HEADER), rows)
    return lines
