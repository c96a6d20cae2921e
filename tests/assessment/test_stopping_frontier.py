"""The exact frontier of adaptive stopping (benchmarks/stopping_frontier.py) on a case
worked by hand.

Two values, noise 0.2, three fixed runs: a run gives the item's answer with probability
q = 0.9, the other value with r = 0.1. After one run x, the answer is x with probability
q, and three runs settle elsewhere only if runs 2 and 3 both give the other value:
qr² + rq² = qr = 0.09. So one run is identical with probability 0.91. Two runs that agree
can no longer change; two that differ settle to the riskier value (1) and three runs to
the third run, which is 1 with probability 1/2. The best rules are then "one run"
(1 call, 0.91) and "two runs, a third if they differ" (2 + 2qr = 2.18 calls, 1.0); at a
target of 0.98 a mixture reaches it with 7/9 of the second: 1 + 1.18 · 7/9 calls.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import stopping_frontier as sf

KINK = 1.18 / 0.09
"""The price at which both best rules cost the same: 1 + 0.09λ = 2.18."""


def test_the_best_rules_are_the_hand_derived_ones() -> None:
    f = sf.frontier([(1.0, 2)], 0.2, max_runs=3, prices=[1.0, KINK, 1000.0])
    assert f.hull() == [pytest.approx((1.0, 0.91)), pytest.approx((2.18, 1.0))]


def test_the_fewest_calls_are_reached_and_proven_necessary() -> None:
    f = sf.frontier([(1.0, 2)], 0.2, max_runs=3, prices=[1.0, KINK, 1000.0])
    achieved, necessary = f.calls_reaching(0.98)
    assert achieved == pytest.approx(1 + 1.18 * 7 / 9)
    assert necessary == pytest.approx(1 + 1.18 * 7 / 9)  # the dual bound meets it at the kink
    best, bound = f.identical_within(1.5)
    assert best == pytest.approx(bound) == pytest.approx(0.91 + 0.09 * 0.5 / 1.18)


def test_a_second_run_at_least_moves_the_cheap_end() -> None:
    f = sf.frontier([(1.0, 2)], 0.2, max_runs=3, min_runs=2, prices=[1.0, KINK, 1000.0])
    assert f.hull() == [pytest.approx((2.0, 0.91)), pytest.approx((2.18, 1.0))]
