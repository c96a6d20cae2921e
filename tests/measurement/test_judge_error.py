"""A judge's defect rate corrected for its measured error (Rogan–Gladen), by hand."""

from __future__ import annotations

import pytest

from corix.measurement.judge_error import corrected_rate, rogan_gladen


def test_rogan_gladen_by_hand() -> None:
    # (0.3 + 0.9 − 1) / (0.8 + 0.9 − 1) = 0.2 / 0.7
    assert rogan_gladen(0.3, 0.8, 0.9) == pytest.approx(0.2 / 0.7)
    assert rogan_gladen(0.05, 0.9, 0.9) == 0.0  # below the false-positive floor: clipped
    assert rogan_gladen(0.4, 0.5, 0.5) is None  # a judge at chance cannot be corrected


def test_a_judge_that_misses_defects_is_corrected_upwards() -> None:
    keys = [f"d{i}" for i in range(10)]
    truth = {key: float(i < 5) for i, key in enumerate(keys)}  # half are defects
    # The judge finds three of the five defects and flags one clean dialogue.
    judge = {key: float(key in {"d0", "d1", "d2", "d5"}) for key in keys}
    rate = corrected_rate(
        {"harm": "h"}, judge, truth, judge="llm", reference="human", resamples=500, seed=1
    )
    # raw 4/10; sensitivity 3/5; specificity 4/5 → (0.4 + 0.8 − 1) / (0.6 + 0.8 − 1) = 0.5
    assert (rate.raw_rate, rate.sensitivity, rate.specificity) == pytest.approx((0.4, 0.6, 0.8))
    assert rate.corrected_rate == pytest.approx(0.5)
    assert rate.n == rate.n_calibration == 10
    assert rate.ci_low is not None and rate.ci_high is not None
    assert rate.ci_low <= rate.corrected_rate <= rate.ci_high
    again = corrected_rate(
        {"harm": "h"}, judge, truth, judge="llm", reference="human", resamples=500, seed=1
    )
    assert (again.ci_low, again.ci_high) == (rate.ci_low, rate.ci_high)


def test_without_both_kinds_of_calibration_pair_nothing_is_corrected() -> None:
    judge = {"a": 1.0, "b": 0.0}
    only_defects = {"a": 1.0}
    rate = corrected_rate({}, judge, only_defects, judge="llm", reference="human")
    assert rate.corrected_rate is None and rate.note is not None
    assert rate.raw_rate == 0.5 and rate.sensitivity == 1.0 and rate.specificity is None
