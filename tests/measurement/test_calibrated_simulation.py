"""Calibrated simulation: entropy-balanced template weights, Kish's ESS and the interval's
coverage, against hand-derived values and a simulation."""

from __future__ import annotations

import math
import random

import pytest

from corix.measurement.simulation.calibration import (
    SampledDialogue,
    calibrate_cell,
    entropy_weights,
    kish_ess,
)
from corix.measurement.stats.wilson import wilson_cc_bounds


def _dialogue(tester: str, template: str, turns: float, defect: bool = False) -> SampledDialogue:
    return SampledDialogue(
        tester=tester,
        template=template,
        features=(turns,),
        defects=frozenset({0} if defect else set()),
        rated=frozenset({0}),
    )


def test_kish_ess_is_the_squared_sum_over_the_sum_of_squares() -> None:
    assert kish_ess([1.0, 1.0, 2.0]) == pytest.approx(16 / 6)
    assert kish_ess([0.25] * 4) == pytest.approx(4.0)


def test_two_templates_take_the_one_mixture_that_matches() -> None:
    # Template A has 1 turn (two dialogues), B has 3 (one); people average 2 turns, so the
    # only matching mixture is half A, half B: 1/4 to each A dialogue, 1/2 to the B one.
    weights = entropy_weights([[1.0], [1.0], [3.0]], [2.0])
    assert weights == pytest.approx([0.25, 0.25, 0.5])


def test_weights_are_exponential_in_the_features_and_match_the_target() -> None:
    rows = [[1.0, 10.0], [2.0, 30.0], [4.0, 20.0], [3.0, 15.0]]
    target = [2.5, 20.0]
    weights = entropy_weights(rows, target)
    assert weights is not None
    for column in range(2):
        assert math.fsum(w * r[column] for w, r in zip(weights, rows, strict=True)) == (
            pytest.approx(target[column])
        )
    # Entropy balancing: log w is affine in the features, so with four points in the plane
    # one log weight follows from the other three.
    logs = [math.log(w) for w in weights]
    (a, b, c), (x, y) = _plane(rows[:3], logs[:3]), rows[3]
    assert logs[3] == pytest.approx(a + b * x + c * y)


def _plane(rows: list[list[float]], values: list[float]) -> tuple[float, float, float]:
    import numpy as np

    matrix = np.array([[1.0, *row] for row in rows])
    a, b, c = np.linalg.solve(matrix, np.array(values))
    return float(a), float(b), float(c)


def test_a_target_outside_the_templates_cannot_be_matched() -> None:
    assert entropy_weights([[1.0], [1.0], [3.0]], [5.0]) is None
    human = [_dialogue(f"h{i}", "", 5.0) for i in range(3)]
    simulated = [_dialogue("s0", "A", 1.0), _dialogue("s1", "B", 3.0)]
    found = calibrate_cell(
        human, simulated, ["turns"], [{"harm": "x"}], confidence=0.95, replicates=20, seed=1
    )
    assert found.effective_n is None and found.template_weights == {}
    assert found.note is not None and found.rates[0].calibrated_rate is None
    assert found.rates[0].raw_rate == 0.0


def test_the_calibrated_rate_uses_the_matching_weights() -> None:
    human = [_dialogue("h0", "", 1.0), _dialogue("h1", "", 3.0)]
    simulated = [
        _dialogue("s0", "A", 1.0, defect=True),
        _dialogue("s1", "A", 1.0),
        _dialogue("s2", "B", 3.0, defect=True),
    ]
    found = calibrate_cell(
        human, simulated, ["turns"], [{"harm": "x"}], confidence=0.95, replicates=50, seed=3
    )
    (rate,) = found.rates
    assert rate.raw_rate == pytest.approx(2 / 3)
    assert rate.calibrated_rate == pytest.approx(0.25 + 0.5)
    assert found.template_weights == pytest.approx({"A": 0.5, "B": 0.5})
    assert found.effective_n == pytest.approx(1 / (2 * 0.25**2 + 0.5**2))
    assert found.human_means == [2.0] and found.raw_means == pytest.approx([5 / 3])
    assert rate.ci_low is not None and rate.ci_high is not None
    assert rate.ci_low <= rate.calibrated_rate <= rate.ci_high


def test_no_defect_in_any_replicate_leaves_corrected_wilsons_upper_end() -> None:
    human = [_dialogue("h0", "", 1.0), _dialogue("h1", "", 3.0)]
    simulated = [_dialogue("s0", "A", 1.0), _dialogue("s1", "A", 1.0), _dialogue("s2", "B", 3.0)]
    found = calibrate_cell(
        human, simulated, ["turns"], [{"harm": "x"}], confidence=0.95, replicates=50, seed=3
    )
    (rate,) = found.rates
    assert rate.calibrated_rate == 0.0 and rate.ci_low == 0.0
    # Weights ¼, ¼, ½: effective n 1 / (2 · ¼² + ½²) = 8/3, and the upper end is corrected
    # Wilson's at that n (a point [0, 0] would claim the rate is known to be zero).
    assert found.effective_n == pytest.approx(8 / 3)
    assert rate.ci_high == pytest.approx(wilson_cc_bounds(0.0, 8 / 3, 0.95)[1])
    assert rate.ci_high is not None and rate.ci_high > 0.5


# A population of two behaviours: "brief" testers (2 turns, defect rate 0.2) and "persistent"
# ones (5 turns, 0.6). People are 70% brief; the simulation runs each template half the time,
# so its raw rate aims at 0.4 while the people's is 0.7 · 0.2 + 0.3 · 0.6 = 0.32.
_KINDS = {"brief": (2.0, 0.2), "persistent": (5.0, 0.6)}
_HUMAN_BRIEF = 0.7
_TRUE_RATE = _HUMAN_BRIEF * 0.2 + (1 - _HUMAN_BRIEF) * 0.6


def _population(rng: random.Random, people: int, per_template: int) -> tuple[list, list]:
    human = []
    for person in range(people):  # each person two dialogues of one behaviour: a cluster
        kind = "brief" if rng.random() < _HUMAN_BRIEF else "persistent"
        turns, p = _KINDS[kind]
        for _ in range(2):
            human.append(_dialogue(f"h{person}", "", turns + rng.gauss(0, 0.5), rng.random() < p))
    simulated = []
    for kind, (turns, p) in _KINDS.items():
        for i in range(per_template):
            defect = rng.random() < p
            simulated.append(_dialogue(f"{kind}{i}", kind, turns + rng.gauss(0, 0.5), defect))
    return human, simulated


def _coverage(datasets: int, replicates: int) -> float:
    rng = random.Random(2026)
    covered = 0
    for seed in range(datasets):
        human, simulated = _population(rng, people=30, per_template=40)
        (rate,) = calibrate_cell(
            human,
            simulated,
            ["turns"],
            [{"harm": "x"}],
            confidence=0.95,
            replicates=replicates,
            seed=seed,
        ).rates
        assert rate.ci_low is not None and rate.ci_high is not None
        covered += rate.ci_low <= _TRUE_RATE <= rate.ci_high
    return covered / datasets


def test_the_interval_covers_the_human_rate_in_a_small_simulation() -> None:
    assert _coverage(datasets=6, replicates=80) >= 4 / 6


@pytest.mark.slow
def test_the_interval_covers_the_human_rate() -> None:
    # 100 data sets: a true coverage of 0.95 lands in this range with about 98% chance
    assert 0.89 <= _coverage(datasets=100, replicates=150) <= 0.995
