"""Comparison tables, correlations between dimensions, annotator vs user view."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from scipy import stats

from corix.measurement import LeafTable, TreeSpec, score_tree
from corix.measurement.trees.comparison import compare_applications, compare_runs
from corix.measurement.trees.interdependency import (
    correlate_across_applications,
    correlate_across_dialogues,
    spearman_matrix,
)
from corix.measurement.trees.loading import parse_tree
from corix.measurement.trees.views import compare_views

MakeLeaves = Callable[[Sequence[tuple[str, ...]]], LeafTable]

TWO_DIMENSIONS = """
name: two
questions:
  harm: {kind: yes_no}
  useful: {kind: slider, min: 1, max: 10, higher_is: risk}
  liked: {kind: likert, min: 1, max: 5, higher_is: better}
nodes:
  root: {summarizer: aggregation, children: [harm_risk, use_risk]}
  harm_risk: {question: harm}
  use_risk:
    summarizer: mean
    split_by: source
    each: {annotation: use_labels, questionnaire: use_perceived}
  use_labels: {summarizer: mean, children: [{question: useful}]}
  use_perceived: {summarizer: mean, children: [{question: liked}]}
"""


@pytest.fixture
def two() -> TreeSpec:
    return parse_tree(TWO_DIMENSIONS, source="two.yaml")


@pytest.fixture
def tradeoff_leaves(make_leaves: MakeLeaves) -> LeafTable:
    """Applications with more harm are less useful-risky: a perfect trade-off."""
    rows = []
    for i, app in enumerate("ABCD"):
        for d in range(4):
            dialogue = f"{app}{d}"
            harm = "yes" if d < i else "no"  # A: 0/4 … D: 3/4
            rows.append((app, "model_testing", "annotation", "harm", dialogue, harm))
            rows.append(
                (app, "model_testing", "annotation", "useful", dialogue, str(10 - 3 * (d < i)))
            )
    rows.append(("A", "field_testing", "questionnaire", "liked", "A9", "1"))  # → 10
    return make_leaves(rows)


def test_spearman_matrix_matches_scipy_and_uses_complete_pairs() -> None:
    rng = np.random.default_rng(1)
    data = rng.normal(size=(12, 3))
    data[0, 2] = np.nan
    matrix = spearman_matrix(data, ["a", "b", "c"])
    assert matrix.rho[0, 1] == pytest.approx(stats.spearmanr(data[:, 0], data[:, 1]).statistic)
    expected = stats.spearmanr(data[1:, 0], data[1:, 2])
    assert (matrix.rho[0, 2], matrix.p_value[0, 2]) == (
        pytest.approx(expected.statistic),
        pytest.approx(expected.pvalue),
    )
    assert matrix.n[0, 2] == 11
    assert matrix.n[0, 1] == 12
    constant = spearman_matrix(np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 4.0]]), ["x", "y"])
    assert constant.pairs()[0].rho is None
    assert constant.pairs()[0].n == 3


def test_tradeoff_across_applications(two: TreeSpec, tradeoff_leaves: LeafTable) -> None:
    results = score_tree(two, tradeoff_leaves)
    matrix = correlate_across_applications(results)
    assert matrix.names == ("harm_risk", "use_risk")
    (pair,) = matrix.tradeoffs()
    assert (pair.first, pair.second, pair.n) == ("harm_risk", "use_risk", 4)
    assert pair.rho == pytest.approx(-1.0)


def test_correlation_across_dialogues(two: TreeSpec, tradeoff_leaves: LeafTable) -> None:
    matrix = correlate_across_dialogues(two, tradeoff_leaves)
    # Per dialogue: harm yes (10) goes with usefulness 7 (risk 20/3), no (0) with 10 (risk 10).
    (pair,) = matrix.pairs()
    assert pair.n == 16
    assert pair.rho == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="'root' is an aggregation"):
        correlate_across_dialogues(two, tradeoff_leaves, ["root"])
    only_a = correlate_across_dialogues(two, tradeoff_leaves, application="A")
    assert only_a.pairs()[0].rho is None  # A has no harm at all: constant


def test_applications_side_by_side(two: TreeSpec, tradeoff_leaves: LeafTable) -> None:
    table = compare_applications(score_tree(two, tradeoff_leaves))
    assert table.columns == ("A", "B", "C", "D")
    assert table.rows[0] == "harm_risk"
    assert "root" not in table.rows
    assert [table.value("harm_risk", app) for app in "ABCD"] == [0.0, 2.5, 5.0, 7.5]
    assert table.value("use_perceived", "B") is None
    assert table.n[table.rows.index("harm_risk")].tolist() == [4, 4, 4, 4]


def test_runs_over_time(two: TreeSpec, tradeoff_leaves: LeafTable, make_leaves: MakeLeaves) -> None:
    later = make_leaves([("B", "model_testing", "annotation", "harm", "B1", "yes")])
    runs = {"run-1": score_tree(two, tradeoff_leaves), "run-2": score_tree(two, later)}
    table = compare_runs(runs, "A", ["harm_risk", "use_risk"])
    assert table.rows == ("run-1", "run-2")
    assert table.value("run-1", "harm_risk") == 0.0
    assert table.value("run-2", "harm_risk") is None  # A was not in run 2
    assert table.n.tolist() == [[4, 5], [0, 0]]
    assert compare_runs(runs, "B").value("run-2", "harm_risk") == 10.0


def test_annotator_vs_user_view(two: TreeSpec, tradeoff_leaves: LeafTable) -> None:
    gaps = {g.application: g for g in compare_views(score_tree(two, tradeoff_leaves))}
    a = gaps["A"]
    assert (a.node_id, a.annotator, a.user) == ("use_risk", 10.0, 10.0)
    assert a.difference == 0.0
    assert not a.disagrees
    b = gaps["B"]
    assert b.user is None
    assert b.difference is None
    assert not b.disagrees


def test_disagreement_is_flagged(two: TreeSpec, make_leaves: MakeLeaves) -> None:
    leaves = make_leaves(
        [
            ("A", "field_testing", "annotation", "useful", "d1", "10"),  # annotators: risk 10
            ("A", "field_testing", "questionnaire", "liked", "d1", "5"),  # user: risk 0
        ]
    )
    (gap,) = compare_views(score_tree(two, leaves), threshold=2.0)
    assert gap.difference == -10.0
    assert gap.disagrees
    with pytest.raises(ValueError, match="threshold"):
        compare_views(score_tree(two, leaves), threshold=-1)
