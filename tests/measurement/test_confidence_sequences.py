"""Betting confidence sequences: the bets by hand, coverage under monitoring after every
wave (where repeated Wilson intervals fall short), and the stopping rule's replay."""

from __future__ import annotations

import math

import numpy as np
import pytest

from corix.measurement.stats.wilson import wilson_interval
from corix.measurement.stopping.confidence_sequences import (
    betting_bets,
    betting_confidence_sequence,
    excludes_ever,
)
from corix.measurement.stopping.rules import StoppingRule, cell_progress, parse_until


def test_first_bets_by_hand() -> None:
    bets = betting_bets(np.array([1.0, 0.0]), 0.05)
    # λ_1 = √(2·log(2/0.05) / (σ̂²_0 · 1 · log 2)) with σ̂²_0 = 1/4.
    assert bets[0] == pytest.approx(math.sqrt(2 * math.log(40) / (0.25 * math.log(2))))
    # μ̂_0 = 1/2, σ̂²_1 = (1/4 + (1 − 1/2)²) / 2 = 1/4; λ_2 uses t log(1 + t) = 2 log 3.
    assert bets[1] == pytest.approx(math.sqrt(2 * math.log(40) / (0.25 * 2 * math.log(3))))
    tuned = betting_bets(np.array([1.0, 0.0]), 0.05, horizon=100)
    assert tuned[1] == pytest.approx(math.sqrt(2 * math.log(40) / (0.25 * 100)))


def test_truncated_bets_by_hand() -> None:
    # All zeros: the bets are large and truncated at c/(1 − m), c = 3/4, so the capital
    # against m = 0.1 grows by 1 + 0.75 · 0.1/0.9 a dialogue; (1 − θ)K⁻ reaches 1/α = 20
    # after ⌈log 40 / log(1 + 0.75 · 0.1/0.9)⌉ = 47 zeros.
    needed = math.ceil(math.log(40) / math.log1p(0.75 * 0.1 / 0.9))
    assert needed == 47
    assert not excludes_ever(np.zeros(needed - 1), 0.1, 0.05)
    assert excludes_ever(np.zeros(needed), 0.1, 0.05)


def test_intervals_shrink_hold_the_mean_and_are_wider_than_wilson() -> None:
    values = np.random.default_rng(0).binomial(1, 0.2, 400).astype(float)
    sequence = betting_confidence_sequence(values, 0.05, checkpoints=[0, 50, 400])
    assert sequence[0] == (0.0, 1.0)
    widths = [high - low for low, high in sequence]
    assert widths[0] > widths[1] > widths[2]
    low, high = sequence[2]
    assert low < values.mean() < high
    wilson_low, wilson_high = wilson_interval(int(values.sum()), 400)
    assert high - low > wilson_high - wilson_low  # the price of looking at any time
    assert betting_confidence_sequence(np.zeros(50), 0.05)[0][0] == 0.0
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        betting_confidence_sequence([1.5], 0.05)


def _monitored_coverage(rate: float, reps: int, n: int, wave: int) -> tuple[float, float]:
    """Coverage of the sequence and of Wilson's interval, both read after every wave."""
    rng = np.random.default_rng(int(rate * 1000))
    ends = np.arange(wave, n + 1, wave)
    sequence_misses = wilson_misses = 0
    for _ in range(reps):
        values = rng.binomial(1, rate, n).astype(float)
        sequence_misses += excludes_ever(values, rate, 0.05)
        counts = np.cumsum(values)[ends - 1].astype(int)
        wilson_misses += any(
            not low <= rate <= high
            for low, high in (
                wilson_interval(int(c), int(e)) for c, e in zip(counts, ends, strict=True)
            )
        )
    return 1 - sequence_misses / reps, 1 - wilson_misses / reps


@pytest.mark.parametrize("rate", [0.05, 0.3])
def test_coverage_under_monitoring_after_every_wave(rate: float) -> None:
    reps = 400
    sequence, wilson = _monitored_coverage(rate, reps, n=300, wave=10)
    error = 3 * math.sqrt(0.05 * 0.95 / reps)
    assert sequence >= 0.95 - error
    assert wilson < 0.95 - error  # 30 looks at a fixed-n interval spend its coverage


def test_parse_until() -> None:
    rule = parse_until(["width=0.1", "gate"], wave=5, confidence=0.95)
    assert (rule.width, rule.gate, rule.wave) == (0.1, True, 5)
    for bad in (["width=abc"], ["width=2"], ["speed"], []):
        with pytest.raises(ValueError):
            parse_until(bad, wave=5, confidence=0.95)


def test_cell_progress_stops_at_the_first_wave_that_settles_the_gate() -> None:
    rule = StoppingRule(gate=True, wave=10)
    values = [0.0] * 60
    progress = cell_progress(values, list(range(60)), rule, ran=60, planned=100, threshold=0.5)
    assert progress.stopped == "gate passes" and progress.n % 10 == 0 and progress.n < 60
    assert progress.high <= 0.5
    # The same replay at each wave: with fewer dialogues run it may still be open.
    early = cell_progress(values[:10], list(range(10)), rule, ran=10, planned=100, threshold=0.5)
    assert early.stopped is None or early.n == progress.n
    full = cell_progress([1.0] * 5, list(range(5)), rule, ran=5, planned=5, threshold=None)
    assert full.stopped == "plan's count" and full.n == 5


@pytest.mark.slow
@pytest.mark.parametrize("rate", [0.01, 0.1, 0.3, 0.5, 0.9])
@pytest.mark.parametrize("horizon", [None, 380])
def test_coverage_under_monitoring_full(rate: float, horizon: int | None) -> None:
    rng = np.random.default_rng(11)
    reps = 3000
    misses = sum(
        excludes_ever(rng.binomial(1, rate, 1000).astype(float), rate, 0.05, horizon=horizon)
        for _ in range(reps)
    )
    assert 1 - misses / reps >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / reps)
