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
    cell = study.rate_over_testers([5] * 6, 1.0, 0.2, FAST)
    assert cell.corix[0] >= 0.90
    assert cell.others["ignoring testers"][0] < 0.93  # the testers matter here


def test_no_tester_correlation_costs_no_width() -> None:
    """20 unbalanced testers, tester SD 0: corix's width is the independent interval's
    (within k/(k−1) and Monte Carlo error); the two-stage bootstrap was ≈ √2 wider."""
    cell = study.rate_over_testers(study.UNBALANCED, 0.0, 0.2, 100)
    independent = cell.others["ignoring testers"][1]
    assert cell.corix[1] / independent < 1.1
    assert cell.others["before (testers → dialogues)"][1] / independent > 1.25


def test_a_tree_node_over_unbalanced_testers_covers() -> None:
    cell = study.tree_over_testers(study.UNBALANCED, 1.5, 0.2, 80)
    assert cell.corix[0] >= 0.90
    assert cell.others["percentile over dialogues"][0] < 0.85


@pytest.mark.parametrize(("m", "icc"), [(1, 0.0), (5, 0.1)])
def test_a_planned_n_meets_the_width_as_often_as_promised(m: int, icc: float) -> None:
    """``corix plan size --width 0.2 --rate 0.3`` (assurance 0.8), run 150 times: the
    reported width is at most 0.2 in at least 80% of runs, within Monte Carlo error."""
    cell = study.planned_width(0.3, 0.2, m, icc, 150)
    assert cell.met >= 0.8 - 2 * (0.8 * 0.2 / 150) ** 0.5


def test_a_node_with_no_defect_seen_keeps_an_upper_bound() -> None:
    cell = study.no_defect_seen(3, 5, 1.0, 0.03, FAST)
    assert cell.corix[0] >= 0.95
    assert cell.others["plain percentile (before)"][0] < 0.80


def test_a_max_states_a_smaller_bias_beside_the_published_value() -> None:
    cell = study.max_bias((0.3, 0.3, 0.3), 30, 1, 0.0, 100)
    assert cell.bias is not None
    published, corrected = cell.bias
    assert published > 0.5 and abs(corrected) < published / 1.5


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
    assert study.main(["--part", "hits-and-sequential", "--simulations", "2000", "--no-write"]) == 0


@pytest.mark.slow
def test_the_whole_study_covers_everywhere() -> None:
    assert study.main(["--simulations", "2000", "--no-write"]) == 0
