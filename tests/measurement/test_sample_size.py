"""Sample-size planning: hand-derived values, and simulation that the planned n delivers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.stats import norm

from corix.measurement.stats.sample_size import (
    design_effect,
    expected_wilson_width,
    icc_anova,
    n_for_assured_width,
    n_for_difference,
    n_for_width,
    width_assurance,
    wilson_widths,
)
from corix.measurement.stats.wilson import wilson_interval


def test_wilson_widths_match_the_reported_interval() -> None:
    for defects, n in ((0, 10), (3, 10), (10, 10), (7, 40)):
        low, high = wilson_interval(defects, n)
        assert wilson_widths(np.array([float(defects)]), n, 0.95)[0] == pytest.approx(high - low)


def test_n_for_width_is_the_smallest_n_with_the_expected_width() -> None:
    n = n_for_width(0.5, 0.2)
    # Wald's n at p = 0.5 is (2·1.96·0.5/0.2)² = 96.04; Wilson's expected width is close.
    assert 85 <= n <= 100
    assert expected_wilson_width(n, 0.5) <= 0.2 < expected_wilson_width(n - 1, 0.5)
    assert n_for_width(0.5, 0.2, deff=2.0) == math.ceil(n * 2.0)
    assert n_for_width(0.05, 0.1) < n  # rare defects need fewer dialogues for one width


def test_n_for_difference_by_hand() -> None:
    # Fleiss without continuity correction, 0.1 vs 0.2, α = 0.05, power 0.8:
    # (1.96·√(2·0.15·0.85) + 0.8416·√(0.09 + 0.16))² / 0.1² = 198.97 → 199.
    assert n_for_difference(0.1, 0.1) == 199
    # Three comparisons: Holm's strictest step tests at 0.05/3.
    z_a, z_b = norm.ppf(1 - 0.05 / 3 / 2), norm.ppf(0.8)
    expected = ((z_a * math.sqrt(2 * 0.15 * 0.85) + z_b * 0.5) / 0.1) ** 2
    assert n_for_difference(0.1, 0.1, comparisons=3) == math.ceil(expected)
    assert n_for_difference(0.95, 0.1) == n_for_difference(0.85, 0.1)  # moves down near 1


def test_icc_and_design_effect_by_hand() -> None:
    assert design_effect(5, 0.1) == pytest.approx(1.4)
    assert icc_anova([[1, 1], [0, 0]]) == pytest.approx(1.0)
    assert icc_anova([[1, 0], [1, 0]]) == 0.0  # negative estimate clamped
    # Means 2/3 and 0; MSB = 2/3, MSW = (2/3)/4 = 1/6, m0 = 3: (1/2) / (2/3 + 2/6) = 0.5.
    assert icc_anova([[1, 1, 0], [0, 0, 0]]) == pytest.approx(0.5)


def _wilson_mean_width(n: int, rate: float, sims: int, rng: np.random.Generator) -> float:
    return float(wilson_widths(rng.binomial(n, rate, sims).astype(float), n, 0.95).mean())


@pytest.mark.parametrize(("rate", "width"), [(0.05, 0.1), (0.3, 0.15)])
def test_planned_n_achieves_the_width_in_simulation(rate: float, width: float) -> None:
    rng = np.random.default_rng(1)
    n = n_for_width(rate, width)
    sims = 4000
    widths = wilson_widths(rng.binomial(n, rate, sims).astype(float), n, 0.95)
    error = 3 * widths.std() / math.sqrt(sims)
    assert widths.mean() <= width + error
    assert _wilson_mean_width(int(n * 0.8), rate, sims, rng) > width  # and not far more


def _power(
    n: int, p1: float, p2: float, alpha: float, sims: int, rng: np.random.Generator
) -> float:
    a, b = rng.binomial(n, p1, sims) / n, rng.binomial(n, p2, sims) / n
    pooled = (a + b) / 2
    se = np.sqrt(2 * pooled * (1 - pooled) / n)
    z = np.divide(np.abs(a - b), se, out=np.zeros(sims), where=se > 0)
    return float((z > norm.ppf(1 - alpha / 2)).mean())


def test_planned_n_achieves_the_power_in_simulation() -> None:
    rng = np.random.default_rng(2)
    sims, target = 4000, 0.8
    n = n_for_difference(0.1, 0.1, power=target, comparisons=3)
    power = _power(n, 0.1, 0.2, 0.05 / 3, sims, rng)
    error = 3 * math.sqrt(target * (1 - target) / sims)
    assert power >= target - error
    assert _power(int(n * 0.8), 0.1, 0.2, 0.05 / 3, sims, rng) < target


def _clustered_rates(
    testers: int, per_tester: int, rate: float, icc: float, sims: int, rng: np.random.Generator
) -> np.ndarray:
    """Rates of ``sims`` studies: testers' own rates ~ Beta with intra-class correlation ``icc``."""
    scale = (1 - icc) / icc
    own = rng.beta(rate * scale, (1 - rate) * scale, (sims, testers))
    return rng.binomial(per_tester, own).sum(axis=1) / (testers * per_tester)


def test_design_effect_matches_the_variance_of_clustered_rates() -> None:
    rng = np.random.default_rng(3)
    rate, icc, m, sims = 0.2, 0.1, 6, 6000
    rates = _clustered_rates(40, m, rate, icc, sims, rng)
    observed = rates.var(ddof=1) * 40 * m / (rate * (1 - rate))
    # The variance ratio of a variance estimate from `sims` draws has SE ≈ √(2/sims).
    assert observed == pytest.approx(design_effect(m, icc), rel=4 * math.sqrt(2 / sims))


def test_icc_anova_recovers_a_simulated_icc() -> None:
    rng = np.random.default_rng(4)
    scale = (1 - 0.2) / 0.2
    own = rng.beta(0.3 * scale, 0.7 * scale, 400)
    groups = [list(rng.binomial(1, p, 8)) for p in own]
    assert icc_anova(groups) == pytest.approx(0.2, abs=0.06)


@pytest.mark.slow
@pytest.mark.parametrize("rate", [0.01, 0.05, 0.2, 0.5, 0.8])
@pytest.mark.parametrize("width", [0.05, 0.1, 0.2])
def test_planned_width_over_a_grid(rate: float, width: float) -> None:
    rng = np.random.default_rng(int(rate * 100 + width * 1000))
    n = n_for_width(rate, width)
    sims = 20000
    widths = wilson_widths(rng.binomial(n, rate, sims).astype(float), n, 0.95)
    assert widths.mean() <= width + 3 * widths.std() / math.sqrt(sims)


@pytest.mark.slow
@pytest.mark.parametrize(("rate", "difference", "comparisons"), [(0.05, 0.1, 1), (0.2, 0.15, 6)])
def test_planned_power_over_a_grid(rate: float, difference: float, comparisons: int) -> None:
    rng = np.random.default_rng(7)
    sims, target = 20000, 0.8
    n = n_for_difference(rate, difference, comparisons=comparisons)
    power = _power(n, rate, rate + difference, 0.05 / comparisons, sims, rng)
    assert power >= target - 3 * math.sqrt(target * (1 - target) / sims)


def test_width_assurance_without_testers_by_hand() -> None:
    """10 dialogues at p = 0.5: the corrected Wilson interval (scipy's ``wilsoncc``) is at
    most 0.56 wide for the counts 0–2 and 8–10, so the assurance is their binomial mass."""
    widths = {x: stats.binomtest(x, 10).proportion_ci(0.95, method="wilsoncc") for x in range(11)}
    meeting = [x for x, ci in widths.items() if ci.high - ci.low <= 0.56]
    expected = sum(stats.binom.pmf(x, 10, 0.5) for x in meeting)
    assert meeting == [0, 1, 2, 8, 9, 10]
    assert width_assurance(10, 0.5, 0.56) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("rate", "width", "m", "icc"), [(0.5, 0.2, 1, 0.0), (0.2, 0.2, 5, 0.1)])
def test_assured_n_is_the_smallest_that_meets_the_width_often_enough(
    rate: float, width: float, m: int, icc: float
) -> None:
    n = n_for_assured_width(rate, width, assurance=0.8, per_tester=m, icc=icc)
    assert n % m == 0
    assert width_assurance(n, rate, width, per_tester=m, icc=icc) >= 0.8
    assert width_assurance(n - m, rate, width, per_tester=m, icc=icc) < 0.8
    # A width met on average is missed in about half the runs: assured needs more.
    assert n > n_for_width(rate, width)
