"""The change between two runs and its interval (MOVER / Newcombe's hybrid score)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from corix.measurement.run_comparison import Compared, difference_interval
from corix.measurement.stats.wilson import wilson_bounds, wilson_cc_bounds

Bounds = Callable[[float, float, float], tuple[float, float]]


def _with(bounds: Bounds, defects: int, n: int) -> tuple[float, float, float]:
    rate = defects / n
    low, high = bounds(rate, n, 0.95)
    return rate, low, high


def test_newcombe_hybrid_score_matches_the_published_example() -> None:
    # Newcombe (1998), Stat Med 17:873, example (a): 56/70 - 48/80 = 0.2000 with
    # method 10 (Wilson) 0.0524 to 0.3339 and method 11 (continuity-corrected) 0.0428 to
    # 0.3422.
    low, high = difference_interval(_with(wilson_bounds, 48, 80), _with(wilson_bounds, 56, 70))
    assert (low, high) == pytest.approx((0.0524, 0.3339), abs=5e-5)
    low, high = difference_interval(
        _with(wilson_cc_bounds, 48, 80), _with(wilson_cc_bounds, 56, 70)
    )
    assert (low, high) == pytest.approx((0.0428, 0.3422), abs=5e-5)


def test_the_change_interval_by_hand() -> None:
    # b - a = 0.5 - 0.2 = 0.3; below: sqrt(0.2^2 + 0.1^2), above: sqrt(0.1^2 + 0.1^2).
    row = Compared("x", 0.2, (0.1, 0.3), 0.5, (0.3, 0.6))
    low, high = row.change_interval
    assert low == pytest.approx(0.3 - 0.05**0.5)
    assert high == pytest.approx(0.3 + 0.02**0.5)


def test_no_interval_without_both_values_and_intervals() -> None:
    assert Compared("x", None, (None, None), 0.5, (0.3, 0.6)).change_interval == (None, None)
    assert Compared("x", 0.2, (None, None), 0.5, (0.3, 0.6)).change_interval == (None, None)
