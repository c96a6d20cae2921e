"""Cluster bootstrap: dialogues move with all their leaves; intervals are seeded."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from corix.measurement import LeafTable, NodeResult, TreeSpec, score_tree
from corix.measurement.stats import bootstrap
from corix.measurement.stats.bootstrap import Resample, cluster_resamples, percentile_interval
from corix.measurement.trees.engine import PreparedLeaves, TreeEvaluator
from corix.measurement.trees.loading import parse_tree

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
    other = score_tree(small_tree, small_leaves, bootstrap=400, seed=8, confidence=0.5)
    first_half = score_tree(small_tree, small_leaves, bootstrap=400, seed=7, confidence=0.5)
    nodes = numeric_nodes(first["A"])
    assert len(nodes) == 8
    for node in nodes:
        assert isinstance(node.value, float)
        assert node.ci_low is not None
        assert node.ci_high is not None
        assert node.ci_low <= node.value <= node.ci_high
    assert intervals(first) == intervals(again)
    assert intervals(first_half) != intervals(other)  # seeds differ: so do the replicates
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
    replicate = evaluator.evaluate(Resample(counts))

    # Each copy of a dialogue is a dialogue of its own.
    rows = [
        (*row[:4], f"{row[4]}#{copy}", row[5])
        for row in _small_rows(small_leaves)
        for copy in range(draws.get(row[4], 0))
    ]
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
def test_resamples_keep_each_strata_dialogue_count(
    monkeypatch: pytest.MonkeyPatch, chunk_cells: int
) -> None:
    monkeypatch.setattr(bootstrap, "_MAX_CHUNK_CELLS", chunk_cells)
    keys = ["a1", "a2", "a3", "b1", "b2", "c1"]
    strata = ["A", "A", "A", "B", "B", "C"]
    chunks = list(cluster_resamples(keys, 25, seed=0, strata=strata))
    assert len(chunks) == (1 if chunk_cells > 1000 else 7)  # 4 replicates per small chunk
    draws = np.concatenate([chunk.dialogues for chunk in chunks], axis=1)
    assert draws.shape == (6, 25)
    np.testing.assert_array_equal(draws[:3].sum(axis=0), 3)
    np.testing.assert_array_equal(draws[3:5].sum(axis=0), 2)
    np.testing.assert_array_equal(draws[5], 1)


def test_resamples_follow_keys_not_row_order() -> None:
    keys = [f"d{i}" for i in range(8)]
    first = next(cluster_resamples(keys, 50, seed=3))
    order = np.random.default_rng(1).permutation(8)
    shuffled = next(cluster_resamples([keys[i] for i in order], 50, seed=3))
    np.testing.assert_array_equal(shuffled.dialogues, first.dialogues[order])


def test_chunking_never_changes_the_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = [f"d{i}" for i in range(6)]
    strata = ["A", "A", "A", "B", "B", "B"]
    testers = ["t1", "t1", "t2", "", "", ""]

    def draws(chunk_cells: int) -> np.ndarray:
        monkeypatch.setattr(bootstrap, "_MAX_CHUNK_CELLS", chunk_cells)
        chunks = list(cluster_resamples(keys, 40, seed=4, strata=strata, testers=testers))
        return np.hstack([c.dialogues for c in chunks])

    whole, in_chunks = draws(1 << 20), draws(6 * 3)  # one chunk vs chunks of 3 replicates
    np.testing.assert_array_equal(whole, in_chunks)


def test_resample_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="distinct"):
        next(cluster_resamples(["a", "a"], 1, seed=0))
    with pytest.raises(ValueError, match="one tester per dialogue"):
        next(cluster_resamples(["a"], 1, seed=0, testers=["t", "u"]))
    with pytest.raises(ValueError, match="one stratum per dialogue"):
        next(cluster_resamples(["a"], 1, seed=0, strata=["A", "B"]))


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


def test_intervals_follow_the_stable_dialogue_key_not_the_session_id() -> None:
    tree_text = """
name: k
questions:
  score: {kind: slider, min: 0, max: 100, higher_is: risk}
nodes:
  root: {question: score}
"""

    def run(session_prefix: str) -> tuple[float | None, float | None]:
        leaves = LeafTable.from_rows(
            {
                "application": "A",
                "level": "model_testing",
                "source": "annotation",
                "question": "score",
                # Session ids are random: their order changes from run to run.
                "dialogue_id": hashlib.sha256(f"{session_prefix}{i}".encode()).hexdigest()[:12],
                "dialogue_key": f"A/pathfinder/model_testing/t{i}/0",
                "value": str(i * 37 % 101),
            }
            for i in range(30)
        )
        root = score_tree(parse_tree(tree_text), leaves, bootstrap=300, seed=2, confidence=0.6)
        return root["A"].ci_low, root["A"].ci_high

    assert run("9f3a") == run("01bc")  # a rerun: new session ids, same work items
