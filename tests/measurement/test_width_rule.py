"""The width rule (`corix run --until width=W` alone), the gate's cap, and the fixed plan
each cell is compared with: hand-derived values and brute-force enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from corix.domain import RunSummary
from corix.measurement.stats.sample_size import n_for_assured_width
from corix.measurement.stats.wilson import wilson_cc_bounds
from corix.measurement.stopping.record import sequential_record
from corix.measurement.stopping.rules import UNDECIDED, StoppingRule, cell_progress, parse_until
from corix.measurement.stopping.width_rule import WIDTH_INTERVAL, width_rule_coverage


def test_the_width_alone_reads_the_reported_interval_and_the_gate_the_sequence() -> None:
    alone = parse_until(["width=0.1"], wave=10, confidence=0.95)
    assert (alone.width_interval, alone.cap) == ("wilson", None)
    both = parse_until(["width=0.1", "gate", "cap=300"], wave=10, confidence=0.95)
    assert (both.width_interval, both.cap) == ("sequence", 300)
    assert "at 300 dialogues (an open gate: undecided at this precision)" in both.text()
    for bad in (["cap=0"], ["cap=x"], ["cap=5"], ["width=0.1", "cap="]):
        with pytest.raises(ValueError):
            parse_until(bad, wave=10, confidence=0.95)


def test_a_cell_stops_once_the_corrected_wilson_interval_is_narrow_enough() -> None:
    # Zero defects: the corrected Wilson upper bound (z² + 1 + z·√(z² + 2 − 1/n)) /
    # (2(n + z²)) is 0.405 at n = 8 and 0.240 at 16; a width of 0.3 stops after wave 2.
    rule = parse_until(["width=0.3"], wave=8, confidence=0.95)
    progress = cell_progress([0.0] * 24, range(24), rule, ran=24, planned=24, threshold=None)
    z = 1.959963984540054
    high = (z * z + 1 + z * math.sqrt(z * z + 2 - 1 / 16)) / (2 * (16 + z * z))
    assert (progress.stopped, progress.n, progress.low) == ("width", 16, 0.0)
    assert progress.high == pytest.approx(high) and progress.interval == WIDTH_INTERVAL
    # The first wave saw no defect: `plan size --rate 0` sizes for the interval corix
    # reports, whose corrected Wilson upper bound at 0 of n is
    # (z² + 1 + z·√(z² + 2 − 1/n)) / (2(n + z²)): 0.3013 at n = 12, 0.2835 at n = 13.
    assert (progress.first_wave_rate, progress.fixed_plan) == (0.0, 13)


def test_fractional_values_fall_back_to_the_sequence() -> None:
    rule = parse_until(["width=0.5"], wave=10, confidence=0.95)
    progress = cell_progress([0.5] * 40, range(40), rule, ran=40, planned=40, threshold=None)
    assert progress.interval.startswith("hedged betting")


def test_exact_coverage_is_the_sum_over_every_path_of_what_cell_progress_does() -> None:
    # 8 dialogues in waves of 2, width 0.7: enumerate all 256 verdict sequences, replay
    # corix's rule on each, and weigh by p^defects (1 − p)^(8 − defects).
    rate, width, wave, cap = 0.3, 0.7, 2, 8
    rule = parse_until([f"width={width}"], wave=wave, confidence=0.95)
    covered = used = estimate = 0.0
    for path in itertools.product((0.0, 1.0), repeat=cap):
        weight = rate ** sum(path) * (1 - rate) ** (cap - sum(path))
        progress = cell_progress(list(path), range(cap), rule, ran=cap, planned=cap, threshold=None)
        covered += weight * (progress.low <= rate <= progress.high)
        used += weight * progress.n
        estimate += weight * sum(path[: progress.n]) / progress.n
    (exact,) = width_rule_coverage([rate], width, wave, cap)
    assert exact.coverage == pytest.approx(covered) and exact.expected_n == pytest.approx(used)
    assert exact.mean_estimate == pytest.approx(estimate)
    assert 2 < exact.expected_n < 8  # some paths stop early, some at the cap


def test_the_width_rule_keeps_its_coverage_across_rates() -> None:
    # Waves of 20, width 0.1, capped at twice the worst-case plan (760): the lowest exact
    # coverage over 2,000 rates is 0.947 (docs/benchmarks.md); 40 of them here.
    rates = (np.arange(40) + 0.5) / 40
    found = width_rule_coverage(rates, 0.1, 20, 760)
    assert min(c.coverage for c in found) >= 0.947
    assert all(c.width_met == pytest.approx(1.0) for c in found)


@pytest.mark.slow
def test_the_width_rule_keeps_its_coverage_on_a_fine_grid() -> None:
    for wave in (10, 20):
        found = width_rule_coverage((np.arange(2000) + 0.5) / 2000, 0.1, wave, 760)
        assert min(c.coverage for c in found) >= 0.947


def test_an_open_gate_stops_at_the_cap_undecided_with_what_a_decision_needs() -> None:
    # One defect in every ten against a gate of 0.2: the sequence after 40 dialogues still
    # holds 0.2; projecting its half-width h ∝ 1/√n to the estimate's distance to the gate
    # (0.1) needs 40·(h/0.1)² dialogues.
    rule = StoppingRule(gate=True, wave=10, cap=40)
    values = ([1.0] + [0.0] * 9) * 10
    progress = cell_progress(values, range(100), rule, ran=40, planned=100, threshold=0.2)
    assert (progress.stopped, progress.n) == (UNDECIDED, 40)
    half = (progress.high - progress.low) / 2
    assert progress.decision_needs == math.ceil(40 * (half / 0.1) ** 2) > 40
    # On the gate itself no number of dialogues is expected to decide.
    on_gate = cell_progress(values, range(100), rule, ran=40, planned=100, threshold=0.1)
    assert (on_gate.stopped, on_gate.decision_needs) == (UNDECIDED, None)


def test_the_record_states_the_saving_against_both_fixed_plans() -> None:
    cell = {"scenario": "s", "level": "red_teaming", "harm": "h", "low": 0.0, "high": 0.1}
    summary = RunSummary(
        sessions=100,
        sequential={
            "rule": "r",
            "settings": {"width": 0.3, "confidence": 0.95},
            "dialogues_per_group": {"a/s/red_teaming": 40, "b/s/red_teaming": 60},
            "cells": [
                {**cell, "application": "a", "n": 40, "stopped": "width", "fixed_plan": 30},
                {
                    **cell,
                    "application": "a",
                    "harm": "g",
                    "n": 40,
                    "stopped": "width",
                    "fixed_plan": 50,
                },
                {**cell, "application": "b", "n": 60, "stopped": "width", "fixed_plan": 20},
            ],
        },
    )
    record = sequential_record("run", summary)
    assert record is not None and record.fixed_plans is not None
    # A group runs its largest cell's plan: 50 + 20; the worst case: 2 × what
    # `plan size --width 0.3` gives at 0.5 (its corrected Wilson width ≤ 0.3 in 80% of runs).
    assert (record.fixed_plans.dialogues, record.fixed_plans.first_wave) == (100, 70)
    assert record.fixed_plans.worst_case == 2 * n_for_assured_width(0.5, 0.3) == 2 * 46
    assert "a fixed plan sized at the first wave's rates" in record.fixed_plans.text()
    assert "43% more" in record.fixed_plans.text()


def test_wilson_cc_at_a_wave_is_the_reported_interval() -> None:
    rule = parse_until(["width=0.9"], wave=5, confidence=0.95)
    values = [1.0, 0.0, 0.0, 1.0, 0.0]
    progress = cell_progress(values, range(5), rule, ran=5, planned=5, threshold=None)
    assert (progress.low, progress.high) == pytest.approx(wilson_cc_bounds(0.4, 5, 0.95))
