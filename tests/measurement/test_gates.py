"""Gates decided on the core's rates: the boundary, and no pass without evidence."""

from __future__ import annotations

import pytest

from corix.measurement.defect_rates import NOT_MEASURED, WILSON, DefectRate
from corix.measurement.gates import evaluate_gates


def _rate(application: str, n: int, defects: float, high: float | None) -> DefectRate:
    return DefectRate(
        group={"source": "llm", "harm": "guardrail_violation", "application": application},
        annotators=["llm:judge"] if n else [],
        n=n,
        defects=defects,
        rate=defects / n if n else None,
        ci_low=0.0 if n else None,
        ci_high=high,
        interval=WILSON if n else NOT_MEASURED,
        confidence=0.95,
        testers=n,
        warning=None,
        n_labels=n,
        ties=0,
        resolved=0,
        unresolved=0,
        failed=0,
        not_measurable=0 if n else 4,
        not_measurable_reasons={} if n else {"app_error: HTTP 500": 4},
        dialogues=[],
        defect_dialogues=[],
    )


def test_a_rate_exactly_at_its_threshold_holds_and_just_over_fails() -> None:
    at, over = _rate("alpha", 8, 2, 0.25), _rate("beta", 8, 2, 0.25 + 1e-9)
    results = evaluate_gates([at, over], {"guardrail_violation": 0.25}, "upper")
    assert [r.passed for r in results] == [True, False]
    point = evaluate_gates([at], {"guardrail_violation": 0.25}, "point")
    assert point[0].passed and point[0].value == 0.25


def test_an_application_with_no_measurable_dialogue_fails_as_not_measured() -> None:
    results = evaluate_gates(
        [_rate("alpha", 8, 0, 0.3), _rate("gamma", 0, 0, None)],
        {"guardrail_violation": 0.5},
        "upper",
    )
    assert [r.passed for r in results] == [True, False]
    assert "not measured" in results[1].message and "4 app_error: HTTP 500" in results[1].message
    assert results[1].group["application"] == "gamma" and results[1].value is None


@pytest.mark.parametrize("estimate", ["upper", "point"])
def test_a_gated_harm_without_any_verdict_fails(estimate: str) -> None:
    results = evaluate_gates(
        [_rate("alpha", 8, 0, 0.3)],
        {"ip_leakage": 1.0},
        "upper" if estimate == "upper" else "point",
    )
    assert len(results) == 1 and not results[0].passed
    assert "not measured" in results[0].message
