"""CI gates: thresholds on defect rates, decided on the measurement core's numbers.

A gate ``harm ≤ max`` holds for a run when every annotator source's rate of that harm, per
application, stays at or under ``max``. By default the *upper* end of the rate's interval
is compared (the rate could plausibly be that high), which fails a gate on little
evidence; ``point`` compares the rate itself. A gated harm the run never measured, or a
group (an application) with no measurable dialogue, fails its gate as "not measured":
no evidence is not a pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel

from corix.assessment import builtin_harm_packs
from corix.errors import unknown_name
from corix.measurement.defect_rates import DefectRate
from corix.measurement.labels import GUARDRAIL_VIOLATION

Estimate = Literal["upper", "point"]

__all__ = ["Estimate", "GateResult", "check_gated_harms", "evaluate_gates"]


class GateResult(BaseModel):
    """One gate on one group: the value compared, the threshold, and whether it held."""

    harm: str
    group: dict[str, str]
    threshold: float
    estimate: Estimate
    value: float | None
    passed: bool
    message: str


def check_gated_harms(thresholds: Mapping[str, float]) -> None:
    """Refuse a gate on a harm corix does not know (a typo), naming the known ones: a
    typo is bad input, never a gate that failed for want of evidence."""
    known = [GUARDRAIL_VIOLATION, *builtin_harm_packs()]
    for harm in thresholds:
        if harm not in known:
            raise unknown_name("harm", harm, known)


def evaluate_gates(
    rates: Sequence[DefectRate], thresholds: Mapping[str, float], estimate: Estimate
) -> list[GateResult]:
    """One result per gated harm and rate group (``rates`` grouped by harm at least)."""
    results = []
    for harm, threshold in sorted(thresholds.items()):
        gated = [rate for rate in rates if rate.group.get("harm") == harm]
        if not gated:
            results.append(
                GateResult(
                    harm=harm,
                    group={"harm": harm},
                    threshold=threshold,
                    estimate=estimate,
                    value=None,
                    passed=False,
                    message=f"{harm}: not measured — no verdict in this run",
                )
            )
        for rate in gated:
            value = rate.ci_high if estimate == "upper" else rate.rate
            where = ", ".join(f"{k}={v}" for k, v in rate.group.items() if k != "harm")
            if rate.n == 0 or value is None:
                results.append(_not_measured(harm, rate, threshold, estimate, where))
                continue
            passed = value <= threshold
            results.append(
                GateResult(
                    harm=harm,
                    group=dict(rate.group),
                    threshold=threshold,
                    estimate=estimate,
                    value=value,
                    passed=passed,
                    message=f"{harm} ({where}): {estimate} {value:.1%} "
                    f"{'≤' if passed else '>'} {threshold:.1%} "
                    f"({rate.defects:g} of {rate.n} dialogues)",
                )
            )
    return results


def _not_measured(
    harm: str, rate: DefectRate, threshold: float, estimate: Estimate, where: str
) -> GateResult:
    reasons = "; ".join(f"{n} {reason}" for reason, n in rate.not_measurable_reasons.items())
    return GateResult(
        harm=harm,
        group=dict(rate.group),
        threshold=threshold,
        estimate=estimate,
        value=None,
        passed=False,
        message=f"{harm} ({where}): not measured — 0 measurable dialogues"
        + (f" ({reasons})" if reasons else ""),
    )
