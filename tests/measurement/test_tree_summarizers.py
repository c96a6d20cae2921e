"""Every built-in summarizer against values worked out by hand."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pytest

from corix.measurement import SUMMARIZERS, LeafTable, score_tree
from corix.measurement.stats.arrays import FloatArray
from corix.measurement.trees.intervals import Interval
from corix.measurement.trees.loading import parse_tree
from corix.measurement.trees.summarizers import NumericSummarizer, Sample, weighted_median
from corix.registry import Plugin

MakeLeaves = Callable[[Sequence[tuple[str, ...]]], LeafTable]
SCALE = Interval(0.0, 10.0)


def sample(
    values: list[float],
    multiplicity: list[float],
    weights: list[float] | None = None,
    codomain: Interval = SCALE,
) -> Sample:
    return Sample(
        values=np.array(values, dtype=float)[None, None, :],
        multiplicity=np.array(multiplicity, dtype=float)[None, None, :],
        weights=np.ones(len(values)) if weights is None else np.array(weights, dtype=float),
        codomain=codomain,
        scale=SCALE,
    )


def numeric(name: str, **params: float) -> NumericSummarizer:
    summarizer = SUMMARIZERS.get(name).model_validate(params)
    assert isinstance(summarizer, NumericSummarizer)
    return summarizer


def run(name: str, s: Sample, **params: float) -> float:
    return float(numeric(name, **params).summarize(s)[0, 0])


# Responses 0, 2, 2, 5, 10 (value 2 occurs twice; 7 is absent).
RESPONSES = sample([0, 2, 5, 7, 10], [1, 2, 1, 0, 1])


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        ("mean", {}, 19 / 5),
        ("weighted_mean", {}, 19 / 5),  # responses weigh 1 each
        ("median", {}, 2.0),
        ("max", {}, 10.0),  # 7 is absent, so it cannot be the max
        ("min", {}, 0.0),
        ("count", {}, 5.0),
        ("share_above", {"threshold": 2}, 2 / 5),  # strictly above: 5 and 10
        ("share_above", {"threshold": 4.9}, 2 / 5),
        ("share_above", {"threshold": -1}, 1.0),
    ],
)
def test_summarizers_on_responses(name: str, params: dict[str, float], expected: float) -> None:
    assert run(name, RESPONSES, **params) == pytest.approx(expected)


def test_median_of_an_even_count_is_the_mean_of_the_middle_two() -> None:
    assert run("median", sample([1, 3, 8], [1, 1, 2])) == pytest.approx((3 + 8) / 2)
    assert run("median", sample([0, 10], [2, 2])) == pytest.approx(5.0)


def test_weighted_median_matches_numpy_on_expanded_data() -> None:
    rng = np.random.default_rng(3)
    values = np.sort(rng.uniform(0, 10, 6))
    counts = rng.integers(0, 4, size=(4, 5, 6)).astype(float)
    counts[..., 0] += 1  # every row has at least one item
    result = weighted_median(values, counts)
    for index in np.ndindex(*counts.shape[:2]):
        expanded = np.repeat(values, counts[index].astype(int))
        assert result[index] == pytest.approx(np.median(expanded))


def test_mean_uses_edge_weights_and_allows_zero() -> None:
    children = sample([4, 8, 1], [1, 1, 0], weights=[1, 3, 5])  # third child is empty
    assert run("mean", children) == pytest.approx((4 + 3 * 8) / 4)
    assert run("weighted_mean", children) == run("mean", children)
    assert run("mean", sample([4, 8, 1], [1, 1, 0])) == pytest.approx(6.0)
    assert run("weighted_mean", sample([4, 8], [1, 1], weights=[0, 1])) == pytest.approx(8.0)
    assert math.isnan(run("weighted_mean", sample([4, 8], [1, 1], weights=[0, 0])))


def test_scale_normalized_median_divides_by_the_codomain_maximum() -> None:
    # Items can reach 5 at most: a median of 2 is 2/5 of the way, i.e. 4 on 0–10.
    s = sample([0, 2, 5], [1, 1, 1], codomain=Interval(0, 5))
    assert run("scale_normalized_median", s) == pytest.approx(4.0)
    assert run("scale_normalized_median", sample([0, 2, 5], [1, 1, 1])) == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("mean", {}),
        ("weighted_mean", {}),
        ("median", {}),
        ("scale_normalized_median", {}),
        ("max", {}),
        ("min", {}),
        ("count", {}),
        ("share_above", {"threshold": 1}),
    ],
)
def test_nothing_present_is_empty_not_zero(name: str, params: dict[str, float]) -> None:
    assert math.isnan(run(name, sample([3, 9], [0, 0]), **params))


def test_summarizers_work_per_unit_and_replicate() -> None:
    multiplicity = np.array([[[1, 0], [0, 1]], [[1, 1], [0, 0]]], dtype=float)
    s = Sample(np.array([2.0, 6.0]), multiplicity, np.ones(2), SCALE, SCALE)
    result = numeric("mean").summarize(s)
    np.testing.assert_allclose(result, [[2.0, 6.0], [4.0, np.nan]])


class _Range(NumericSummarizer):
    """max − min, registered from a test like a third party would."""

    def summarize(self, sample: Sample) -> FloatArray:
        present = sample.multiplicity > 0
        high = np.where(present, sample.values, -np.inf).max(axis=-1)
        low = np.where(present, sample.values, np.inf).min(axis=-1)
        return np.where(present.any(axis=-1), high - low, np.nan)


@pytest.fixture
def range_summarizer() -> Iterator[None]:
    with SUMMARIZERS.scope():
        Plugin("corix-test-summarizers").add(SUMMARIZERS, "test_range", _Range)
        yield


@pytest.mark.usefixtures("range_summarizer")
def test_registered_summarizer_is_used_by_a_tree(make_leaves: MakeLeaves) -> None:
    tree = parse_tree(
        """
name: custom
questions:
  useful: {kind: slider, min: 1, max: 10, higher_is: risk}
nodes:
  root:
    summarizer: mean
    children: [{question: useful, summarizer: corix_test_summarizers.test_range}]
""",
        source="custom.yaml",
    )
    leaves = make_leaves(
        [
            ("A", "model_testing", "annotation", "useful", "d1", "1"),  # → 0
            ("A", "model_testing", "annotation", "useful", "d2", "4"),  # → 10/3
            ("A", "model_testing", "annotation", "useful", "d3", "4"),
        ]
    )
    assert score_tree(tree, leaves)["A"].value == pytest.approx(10 / 3)


def test_weighted_median_with_shared_dialogue_weights() -> None:
    # Three dialogues: one labelled 10 by three annotators (⅓ each), one 0, one 4.
    thirds = [1 / 3] * 3
    values = np.array([10.0, 10.0, 10.0, 0.0, 4.0])
    result = weighted_median(values, np.array([[*thirds, 1.0, 1.0]]))
    assert result[0] == pytest.approx(4.0)  # the median of the dialogues 10, 0, 4
    # Two annotators split a dialogue (0 and 10, ½ each), another is 4: sorted, the
    # weights are ½ at 0, 1 at 4, ½ at 10; the two middle positions fall on 0 and 4.
    split = weighted_median(np.array([0.0, 10.0, 4.0]), np.array([[0.5, 0.5, 1.0]]))
    assert split[0] == pytest.approx(2.0)
