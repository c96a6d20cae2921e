"""The Wilson score interval of defect rates, against hand-derived values."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from corix.measurement.defect_rates import DIALOGUE_BOOTSTRAP, DialogueLabels, rate_interval
from corix.measurement.stats.wilson import wilson_cc_bounds, wilson_interval

Z95 = 1.959963984540054


def test_wilson_two_of_ten_by_hand() -> None:
    # p = 0.2, z² = 3.841459, n = 10
    # denominator = 1 + z²/n = 1.3841459
    # centre = (0.2 + z²/20) / 1.3841459 = 0.3920729 / 1.3841459 = 0.2832598
    # half = z / 1.3841459 * sqrt(0.2 * 0.8 / 10 + z² / 400)
    #      = 1.4160090 * sqrt(0.016 + 0.0096036) = 1.4160090 * 0.1600114 = 0.2265776
    # interval = (0.0566822, 0.5098374)
    low, high = wilson_interval(2, 10)
    assert low == pytest.approx(0.0566822, abs=1e-6)
    assert high == pytest.approx(0.5098374, abs=1e-6)


def test_wilson_at_the_edges_by_hand() -> None:
    # 0 of 10: centre = half = (z²/20) / 1.3841459 = 0.1387664, so (0, 0.2775328).
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775328), abs=1e-6)
    # n of n mirrors 0 of n.
    assert wilson_interval(10, 10) == pytest.approx((1 - 0.2775328, 1.0), abs=1e-6)
    # 1 of 1: centre = (1 + z²/2) / (1 + z²) ; half = z / (1 + z²) * sqrt(z² / 4)
    centre = (1 + Z95**2 / 2) / (1 + Z95**2)
    half = Z95 / (1 + Z95**2) * Z95 / 2
    assert wilson_interval(1, 1) == pytest.approx((centre - half, 1.0))


def test_wilson_confidence_changes_the_width() -> None:
    # 90% uses z = 1.644854: half = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²) for 50 of 100
    z = 1.6448536
    half = z / (1 + z * z / 100) * math.sqrt(0.25 / 100 + z * z / 40000)
    assert wilson_interval(50, 100, confidence=0.90) == pytest.approx((0.5 - half, 0.5 + half))


def test_interval_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, confidence=1.0)


def test_the_effective_n_never_exceeds_the_labels() -> None:
    """Dialogue means of 0.45 / 0.55 vary far less than 0/1 verdicts would: the
    bootstrap's effective n is huge, and only its bound (the number of labels) keeps the
    interval honest."""
    keys = [f"d{i:02d}" for i in range(10)]
    labels = [(key, a, 0.0) for key in keys for a in ("x", "y")]
    data = DialogueLabels(keys, [0.45, 0.55] * 5, labels)
    low, high, method = rate_interval(data, confidence=0.95, resamples=400, seed=1)
    assert method == DIALOGUE_BOOTSTRAP
    assert (low, high) == pytest.approx(wilson_cc_bounds(0.5, 20, 0.95))


def test_settled_values_are_resampled_not_the_annotators() -> None:
    """Under ``combine: settle`` each dialogue's settled verdict is its value: the interval
    is Wilson's on the settled dialogues, however the annotators split."""
    keys = [f"d{i:02d}" for i in range(20)]
    votes = [(1.0, 1.0, 0.0) if i < 6 else (0.0, 0.0, 1.0) for i in range(20)]
    labels = [(key, f"a{j}", v[j]) for key, v in zip(keys, votes, strict=True) for j in range(3)]
    settled = [1.0 if sum(v) >= 2 else 0.0 for v in votes]
    data = DialogueLabels(keys, settled, labels)
    low, high, _ = rate_interval(data, confidence=0.95, resamples=300, seed=0)
    assert (low, high) == pytest.approx(wilson_cc_bounds(6 / 20, 20, 0.95))


@pytest.mark.parametrize(("defects", "n"), [(0, 10), (2, 10), (1, 30), (15, 30), (60, 60), (7, 13)])
def test_continuity_corrected_wilson_matches_scipy(defects: int, n: int) -> None:
    reference = stats.binomtest(defects, n).proportion_ci(0.95, method="wilsoncc")
    low, high = wilson_cc_bounds(defects / n, n, 0.95)
    assert (low, high) == pytest.approx((reference.low, reference.high), abs=1e-12)
