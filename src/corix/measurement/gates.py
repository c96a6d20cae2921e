"""CI gates: thresholds on defect rates, decided on the measurement core's numbers.

A gate ``harm ≤ max`` holds for a run when every annotator source's rate of that harm, per
application, stays at or under ``max``. By default the *upper* end of the rate's interval
is compared (the rate could plausibly be that high), which fails a gate on little
evidence; ``point`` compares the rate itself. A gated harm the run never measured fails
its gate: no evidence is not a pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel

from corix.measurement.defect_rates import DefectRate

Estimate = Literal["upper", "point"]

__all__ = ["Estimate", "GateResult", "evaluate_gates"]


class GateResult(BaseModel):
    """One gate on one group: the value compared, the threshold, and whether it held."""

    harm: str
    group: dict[str, str]
    threshold: float
    estimate: Estimate
    value: float | None
    passed: bool
    message: str


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
                    message=f"{harm} was not measured in this run",
                )
            )
        for rate in gated:
            value = rate.ci_high if estimate == "upper" else rate.rate
            passed = value is not None and value <= threshold
            where = ", ".join(f"{k}={v}" for k, v in rate.group.items() if k != "harm")
            shown = "—" if value is None else f"{value:.1%}"
            results.append(
                GateResult(
                    harm=harm,
                    group=dict(rate.group),
                    threshold=threshold,
                    estimate=estimate,
                    value=value,
                    passed=passed,
                    message=f"{harm} ({where}): {estimate} {shown} "
                    f"{'≤' if passed else '>'} {threshold:.1%} "
                    f"({rate.defects:g} of {rate.n} dialogues)",
                )
            )
    return results
