"""The sequential benchmark's fast subset (the whole comparison is marked slow).

The benchmark (benchmarks/bench_sequential.py) runs corix's own stopping rule over cells
with known rates; docs/benchmarks.md reports its figures.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_sequential as bench
from corix.measurement.stopping.rules import CellProgress, StoppingRule, cell_progress


def test_a_cell_without_defects_stops_at_the_third_wave_of_20() -> None:
    # All zeros: the truncated bets (c = 3/4) exclude 0.1 after 47 (every bet truncated,
    # test_truncated_bets_by_hand) to 54 dialogues (the bets tuned to n* = 380 start
    # smaller); so the interval is [0, 0.1] after the third wave of 20 (the fourth with
    # c = 1/2, which needs 72), not before.
    # The benchmark's rule (bench.until_rule), with the horizon stopping_horizon(0.1)
    # computes written out: the fixed plan's 380, which takes seconds to find.
    rule = StoppingRule(width=0.1, wave=20, horizon=380)
    cap = 2 * 380

    def progress(ran: int) -> CellProgress:
        return cell_progress([0.0] * ran, range(ran), rule, ran=ran, planned=cap, threshold=None)

    assert progress(40).stopped is None
    stopped = progress(60)
    assert (stopped.stopped, stopped.n, stopped.low) == ("width", 60, 0.0)
    assert stopped.high <= 0.1


def test_every_dialogue_costs_both_arms_the_same_calls() -> None:
    assert bench.calls_per_dialogue(3, 2) == {"application": 3, "simulator": 4, "judge": 2}


@pytest.mark.slow
def test_the_benchmarks_rule_is_the_one_until_runs() -> None:
    assert bench.until_rule(0.1, 20, gate=True) == StoppingRule(
        width=0.1, gate=True, wave=20, horizon=380
    )


@pytest.mark.slow
def test_the_sequential_run_saves_40_percent_at_waves_of_20_and_keeps_coverage() -> None:
    comparison = bench.sequential_vs_fixed(20, 0.1, 20, 0, gate=False, rates=bench.CELL_RATES)
    assert comparison.saved >= 0.40
    assert all(cell.narrow_share == 1.0 for cell in comparison.cells)
    reps = 1000
    coverage = bench.coverage_under_monitoring(reps, 1000, 20, 1)
    error = 3 * math.sqrt(0.05 * 0.95 / reps)
    for found in coverage.values():
        assert found["cs"] >= 0.95 - error and found["tuned"] >= 0.95 - error
        assert found["wilson"] < 0.95 - error
