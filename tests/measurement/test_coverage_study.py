"""The coverage study's fast subset (the whole study is marked slow).

Each cell simulates evaluations with a known truth and counts how often corix's 95%
interval holds it. With 200 simulations the Monte Carlo error is about ±0.03, so a cell
passes here at 0.90; the full study (2,000 a cell) holds every cell to 0.93 and writes
its table into docs/measurement.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import coverage_study as study

FAST = 200


@pytest.mark.parametrize("n", [10, 30, 60])
@pytest.mark.parametrize("p", [0.05, 0.2, 0.5])
def test_one_label_per_dialogue_covers_exactly(n: int, p: float) -> None:
    cell = study.single_label(n, p)
    assert cell.simulations == 0 and cell.coverage >= 0.95
    assert cell.today is not None and cell.width <= 1.25 * cell.today[1]


def test_settled_annotators_cover_the_expected_settled_rate() -> None:
    assert study.annotators(0.2, "settle", FAST).coverage >= 0.90


def test_a_rate_over_few_testers_covers() -> None:
    assert study.rate_with_testers(6, 5, 1.0, FAST).coverage >= 0.90


def test_a_tree_node_over_few_testers_covers_where_today_did_not() -> None:
    cell = study.tree_node(6, 5, 1.0, FAST)
    assert cell.coverage >= 0.90
    assert cell.today is not None and cell.today[0] < 0.90


def test_a_max_over_equal_levels_covers_where_today_did_not() -> None:
    cell = study.tree_max((0.3, 0.3, 0.3), 30, 1, 0.0, FAST)
    assert cell.coverage >= 0.90
    assert cell.today is not None and cell.today[0] < 0.90


def test_a_judge_correction_at_low_prevalence_covers() -> None:
    assert study.judge(0.05, 50, 150).coverage >= 0.90


def test_hit_at_k_covers_where_the_bootstrap_collapsed_to_zero() -> None:
    # Issue 34's cell: 6 templates × 6 attempts, a 3% rate, k = 5. The percentile bootstrap
    # covered about 0.6 and gave [0, 0] in a third of evaluations; the score interval over
    # templates never is a point.
    cell = study.hit_cell(6, 0.03, 0.0, FAST)
    coverage, _, point = cell.methods["corix"]
    before_coverage, _, before_point = cell.methods["percentile bootstrap (before)"]
    assert coverage >= 0.90 and point == 0.0
    assert before_coverage < 0.80 and before_point > 0.2


def test_hit_at_k_needs_the_correction_when_templates_hit_all_or_nothing() -> None:
    # 5 attempts and k = 5: each template's hit@5 is 0 or 1; plain Wilson over 10 such
    # templates at a mean of about 0.05 is the binomial case where it dips (0.914 exactly).
    cell = study.hit_cell(10, 0.01, 0.0, FAST, attempts=5)
    assert cell.methods["corix"][0] >= 0.95
    assert cell.methods["plain Wilson over templates"][0] < cell.methods["corix"][0]


@pytest.mark.slow
def test_the_issue_34_sections_cover_everywhere() -> None:
    assert study.main(["--only-issue-34", "--simulations", "2000", "--no-write"]) == 0


@pytest.mark.slow
def test_the_whole_study_covers_everywhere() -> None:
    assert study.main(["--simulations", "2000", "--no-write"]) == 0
