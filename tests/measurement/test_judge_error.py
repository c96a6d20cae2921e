"""A judge's defect rate corrected for its measured error (Rogan–Gladen), by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from corix.measurement.core import measure
from corix.measurement.judges.corrected_rate import corrected_rate, posterior_rates, rogan_gladen
from corix.storage import Database
from support.testers_run import write_judged_levels_run


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
    assert rate.rogan_gladen == pytest.approx(0.5)
    assert rate.n == rate.n_calibration == 10
    assert rate.ci_low is not None and rate.ci_high is not None
    assert rate.corrected_rate is not None
    assert rate.ci_low <= rate.corrected_rate <= rate.ci_high
    # Five trusted defects are too few to trust a sensitivity: said, with the labels needed.
    needed = math.ceil(10 / min(rate.corrected_rate, 1 - rate.corrected_rate))
    assert rate.note is not None and "too thin" in rate.note
    assert f"about {needed} human labels" in rate.note
    again = corrected_rate(
        {"harm": "h"}, judge, truth, judge="llm", reference="human", resamples=500, seed=1
    )
    assert (again.ci_low, again.ci_high) == (rate.ci_low, rate.ci_high)


def test_without_both_kinds_of_calibration_pair_the_interval_is_the_priors() -> None:
    judge = {"a": 1.0, "b": 0.0}
    only_defects = {"a": 1.0}
    rate = corrected_rate({}, judge, only_defects, judge="llm", reference="human")
    assert rate.rogan_gladen is None and rate.note is not None and "too thin" in rate.note
    assert rate.raw_rate == 0.5 and rate.sensitivity == 1.0 and rate.specificity is None
    assert rate.ci_low is not None and rate.ci_high is not None
    assert rate.ci_high - rate.ci_low > 0.5  # two dialogues say almost nothing


def test_fully_calibrated_sample_gives_the_conjugate_posterior() -> None:
    """Every judged dialogue has a trusted label: nothing is hidden, so the rate's
    posterior is Beta(½ + defects, ½ + clean) exactly, its quantiles known in closed form."""
    truth = {f"d{i:03d}": float(i < 12) for i in range(80)}
    judge = {key: float(i % 3 == 0) for i, key in enumerate(truth)}  # judge agrees at random
    rate = corrected_rate(
        {"harm": "h"}, judge, truth, judge="llm", reference="human", resamples=20000, seed=3
    )
    posterior = stats.beta(0.5 + 12, 0.5 + 68)
    assert rate.corrected_rate == pytest.approx(posterior.median(), abs=0.003)
    assert rate.ci_low == pytest.approx(posterior.ppf(0.025), abs=0.004)
    assert rate.ci_high == pytest.approx(posterior.ppf(0.975), abs=0.005)


def test_the_posterior_is_reproducible_per_seed() -> None:
    counts = (8, 2, 3, 37, 40, 310)
    first = posterior_rates(counts, 500, [1, 2])
    np.testing.assert_array_equal(first, posterior_rates(counts, 500, [1, 2]))
    assert len(first) == 500 and first.min() > 0 and first.max() < 1


def test_sensitivity_and_specificity_carry_corrected_wilson_intervals() -> None:
    keys = [f"d{i}" for i in range(10)]
    truth = {key: float(i < 5) for i, key in enumerate(keys)}
    judge = {key: float(key in {"d0", "d1", "d2", "d5"}) for key in keys}
    rate = corrected_rate({"harm": "h"}, judge, truth, judge="llm", reference="human")
    # Sensitivity 3/5, Newcombe's method 4 by hand (z² = 3.841459, 2·(5 + z²) = 17.682918):
    # low  = (6 + z² − 1 − z·√(z² − 2 − 1/5 + 4·0.6·(2 + 1))) / 17.682918
    # high = (6 + z² + 1 + z·√(z² + 2 − 1/5 + 4·0.6·(2 − 1))) / 17.682918
    assert rate.sensitivity_low == pytest.approx(3.013586 / 17.682918, abs=1e-6)
    assert rate.sensitivity_high == pytest.approx(16.399419 / 17.682918, abs=1e-6)
    assert rate.specificity_low is not None and rate.specificity_high is not None
    assert rate.specificity_low < 0.8 < rate.specificity_high
    assert rate.below_accuracy is True  # sensitivity 0.6 < 0.8
    only_defects = corrected_rate({}, {"a": 1.0}, {"a": 1.0}, judge="llm", reference="human")
    assert only_defects.specificity_low is None and only_defects.sensitivity_low is not None
    assert only_defects.below_accuracy is None


def test_an_oversampled_verdict_does_not_lean_the_accuracies_toward_it() -> None:
    # 100 judged: 20 "yes" (10 defects), 80 "no" (8 defects). All 20 "yes" are labelled,
    # 8 of the 80 "no" (1 defect): each "no" label stands for 10 dialogues. Weighted:
    # sensitivity 10 / (10 + 1·10) = 0.5 (unweighted 10/11), specificity 70 / (10 + 70).
    judge = {f"d{i}": float(i < 20) for i in range(100)}
    truth = {f"d{i}": float(i < 10) for i in range(20)}
    truth |= {f"d{i}": float(i == 20) for i in range(20, 28)}
    rate = corrected_rate({}, judge, truth, judge="llm", reference="human")
    assert rate.sensitivity == pytest.approx(0.5)
    assert rate.specificity == pytest.approx(70 / 80)
    assert rate.sensitivity_low is not None and rate.sensitivity_high is not None
    # Kish's effective n of the 11 defects (weights 1 ×10 and 10): 20² / 110 ≈ 3.6, so the
    # interval is wider than 11 equal-weight labels would give.
    assert rate.sensitivity_low < 0.2 and rate.sensitivity_high > 0.8


async def test_a_judges_error_is_measured_per_level(sqlite_db: Database) -> None:
    measurement = measure(sqlite_db, [await write_judged_levels_run(sqlite_db)])
    rates = measurement.judge_corrected("llm", "human", by=("application", "level"))
    by_level = {r.group["level"]: r for r in rates if r.group["harm"] == "guardrail_violation"}
    assert (by_level["model_testing"].sensitivity, by_level["model_testing"].specificity) == (
        1.0,
        1.0,
    )
    assert (by_level["field_testing"].sensitivity, by_level["field_testing"].specificity) == (
        1.0,
        0.0,
    )
    (pooled,) = [
        r
        for r in measurement.judge_corrected("llm", "human")
        if r.group["harm"] == "guardrail_violation"
    ]
    assert pooled.specificity == 0.5 and "level" not in pooled.group
    assert by_level["model_testing"].below_accuracy is False
    with pytest.raises(ValueError, match="annotator"):
        measurement.judge_corrected("llm", "human", by=("annotator",))


def test_a_thin_calibration_names_its_reference_not_people() -> None:
    judge = {"a": 1.0, "b": 0.0}
    rate = corrected_rate({}, judge, {"a": 1.0, "b": 0.0}, judge="llm", reference="reference")
    assert rate.note is not None and "1 reference-labelled defects" in rate.note
    assert "human" not in rate.note
