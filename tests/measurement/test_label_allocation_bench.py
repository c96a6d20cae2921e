"""The label-allocation benchmark: its plan spends the same labels as uniform draws, and
(slow) its intervals cover and are narrower."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_label_allocation as bench


def test_the_plan_spends_the_whole_budget_on_unlabelled_dialogues() -> None:
    rng = np.random.default_rng(1)
    truth = rng.random(800) < 0.1
    verdicts = np.where(truth, rng.random(800) < 0.85, rng.random(800) >= 0.9)
    cell_of = np.repeat(np.arange(4), 200)
    pilot = set(range(0, 800, 40))
    chosen, shrinks = bench._planned(rng, (truth, verdicts, cell_of), pilot, 60)
    assert len(chosen) == 60 and not chosen & pilot
    assert len(shrinks) == 4 and all(0 < s < 1 for s in shrinks)


def test_one_evaluation_records_both_arms_in_every_cell() -> None:
    design = bench.Design((0.05, 0.3), 100, 0.85, 0.9, 10, 20)
    for per_cell in (False, True):
        cells = bench.study(design, 1, per_cell=per_cell)
        assert all(len(c.widths[arm]) == 1 for c in cells for arm in ("plan", "uniform"))


def test_a_design_may_give_each_cell_its_own_sensitivity() -> None:
    design = bench.DESIGNS[-1]
    assert [design.se(at) for at in range(4)] == [0.7, 0.8, 0.9, 0.95]
    assert "Se 0.7/0.8/0.9/0.95" in design.row() and bench.DESIGNS[0].se(3) == 0.85


@pytest.mark.slow
@pytest.mark.parametrize(
    ("design", "narrower"),
    [(bench.DESIGNS[0], 0.75), (bench.DESIGNS[2], 0.92), (bench.DESIGNS[-1], 0.92)],
    ids=["rare-alike", "rare-differ", "common-differ"],
)
def test_the_plan_covers_and_is_narrower(design: bench.Design, narrower: float) -> None:
    cells = bench.study(design, 100)
    assert all(statistics.mean(c.covered["plan"]) >= 0.88 for c in cells)
    ratios = [
        statistics.mean(c.widths["plan"]) / statistics.mean(c.widths["uniform"]) for c in cells
    ]
    assert statistics.mean(ratios) < narrower


def test_the_ceiling_is_never_wider_than_the_proportional_split() -> None:
    # The best split is chosen among fixed shares *and* the proportional one, so its
    # ratio is at most 1, and exactly 1 when the proportional split wins.
    design = bench.Design((0.05, 0.3), 200, 0.85, 0.9, 20, 40)
    found = bench.ceiling(design, 2)
    assert len(found) == 2
    for share, ratio in found:
        assert 0 < ratio <= 1
        assert (share is None) == (ratio == 1)


def test_the_large_sample_bound_starts_from_the_proportional_split_and_can_only_gain() -> None:
    design = bench.Design((0.02, 0.3), 1000, 0.85, 0.9, 100, 300)
    per_cell, mean = bench.bound(design)
    assert len(per_cell) == 2 and mean == pytest.approx(statistics.mean(per_cell))
    # a rare cell gains most from moving its labels toward the judge's "yes"
    assert mean <= 1 and per_cell[0] < 0.95
    # one sensitivity for both cells lets the rare cell learn from the common one's misses
    assert bench.bound(design, pooled=True)[1] < mean
