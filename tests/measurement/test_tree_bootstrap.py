"""Cluster bootstrap: dialogues move with all their leaves; intervals are seeded."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from corix.measurement import LeafTable, NodeResult, TreeSpec, bootstrap, score_tree
from corix.measurement.bootstrap import cluster_resamples, percentile_interval
from corix.measurement.engine import PreparedLeaves, TreeEvaluator

MakeLeaves = Callable[[Sequence[tuple[str, ...]]], LeafTable]


def numeric_nodes(root: NodeResult) -> list[NodeResult]:
    return [node for node in root.walk() if isinstance(node.value, float)]


def intervals(results: dict[str, NodeResult]) -> list[tuple[float | None, float | None]]:
    return [(node.ci_low, node.ci_high) for node in numeric_nodes(results["A"])]


def test_interval_contains_the_estimate_and_is_reproducible(
    small_tree: TreeSpec, small_leaves: LeafTable
) -> None:
    first = score_tree(small_tree, small_leaves, bootstrap=400, seed=7)
    again = score_tree(small_tree, small_leaves, bootstrap=400, seed=7)
    other = score_tree(small_tree, small_leaves, bootstrap=400, seed=8)
    nodes = numeric_nodes(first["A"])
    assert len(nodes) == 8
    for node in nodes:
        assert isinstance(node.value, float)
        assert node.ci_low is not None
        assert node.ci_high is not None
        assert node.ci_low <= node.value <= node.ci_high
    assert intervals(first) == intervals(again)
    assert intervals(first) != intervals(other)
    # An empty node has no interval; an aggregation neither.
    assert first["B"].find("experience").ci_low is None
    assert first["A"].ci_low is None


def test_a_replicate_equals_scoring_the_resampled_dialogues(
    small_tree: TreeSpec, small_leaves: LeafTable, make_leaves: MakeLeaves
) -> None:
    prepared = PreparedLeaves(small_tree, small_leaves)
    evaluator = TreeEvaluator(prepared, prepared.application, 2)
    draws = {"d1": 2, "d2": 0, "d3": 1, "d4": 0, "d5": 3, "d6": 1, "d7": 1}
    counts = np.array([[draws[d]] for d in prepared.dialogue_ids], dtype=float)
    replicate = evaluator.evaluate(counts)

    rows = [row for row in _small_rows(small_leaves) for _ in range(draws.get(row[4], 0))]
    copied = make_leaves(rows)
    expected = score_tree(small_tree, copied)["A"]
    for position, node in enumerate(small_tree.nodes):
        values = replicate[position]
        if values is None:
            continue
        want = expected.find(node.id).value
        got = values[0, 0]
        assert (np.isnan(got) and want is None) or got == pytest.approx(want)


def _small_rows(leaves: LeafTable) -> list[tuple[str, ...]]:
    def text(column: str, i: int) -> str:
        categorical = getattr(leaves, column)
        return str(categorical.categories[categorical.codes[i]])

    columns = ("application", "level", "source", "question", "dialogue_id", "value")
    return [tuple(text(c, i) for c in columns) for i in range(len(leaves))]


@pytest.mark.parametrize("chunk_cells", [1 << 23, 6 * 4])
def test_resamples_keep_each_applications_dialogue_count(
    monkeypatch: pytest.MonkeyPatch, chunk_cells: int
) -> None:
    monkeypatch.setattr(bootstrap, "_MAX_CHUNK_CELLS", chunk_cells)
    dialogue_unit = np.array([0, 0, 0, 1, 1, 2])
    chunks = list(cluster_resamples(dialogue_unit, 25, np.random.default_rng(0)))
    assert len(chunks) == (1 if chunk_cells > 1000 else 7)  # 4 replicates per small chunk
    draws = np.concatenate(chunks, axis=1)
    assert draws.shape == (6, 25)
    np.testing.assert_array_equal(draws[:3].sum(axis=0), 3)
    np.testing.assert_array_equal(draws[3:5].sum(axis=0), 2)
    np.testing.assert_array_equal(draws[5], 1)


def test_percentile_interval_skips_empty_replicates() -> None:
    replicates = np.array([[1.0, 2.0, 3.0, 4.0, np.nan], [np.nan] * 5])
    low, high = percentile_interval(replicates, 0.5)
    assert (low[0], high[0]) == (pytest.approx(1.75), pytest.approx(3.25))
    assert np.isnan(low[1])
    assert np.isnan(high[1])


def test_invalid_bootstrap_arguments(small_tree: TreeSpec, small_leaves: LeafTable) -> None:
    with pytest.raises(ValueError, match="bootstrap"):
        score_tree(small_tree, small_leaves, bootstrap=-1)
    with pytest.raises(ValueError, match="confidence"):
        score_tree(small_tree, small_leaves, bootstrap=10, confidence=1.0)
