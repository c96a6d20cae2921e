"""Several annotators on a dialogue (``combine: keep``): the dialogue, or its tester, is
the resampled unit, never the annotator.

A dialogue's value (its annotators' mean) already carries their disagreement, so drawing
its annotators again would add their within-dialogue variance a second time, as drawing
a tester's dialogues again did. The intervals below are checked against the variance
derived by hand from the dialogue values alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from corix.measurement import LeafTable, score_tree
from corix.measurement.defect_rates import DialogueLabels, bootstrap_method, rate_interval
from corix.measurement.stats.wilson import wilson_cc_bounds
from corix.measurement.trees.loading import parse_tree

# 30 dialogues, three annotators each: 10 say (0, 0, 0), 10 (1, 0, 0), 5 (1, 1, 0), 5 (1, 1, 1).
VOTES = [(0, 0, 0)] * 10 + [(1, 0, 0)] * 10 + [(1, 1, 0)] * 5 + [(1, 1, 1)] * 5
KEYS = [f"d{i:02d}" for i in range(len(VOTES))]
VALUES = np.array([sum(v) / 3 for v in VOTES])
LABELS = [(key, f"a{j}", float(v[j])) for key, v in zip(KEYS, VOTES, strict=True) for j in range(3)]
RESAMPLES = 40_000  # Monte Carlo error of the variance about 0.7%: ends within 0.002
TREE_RESAMPLES = 20_000
NODE = """
name: node
questions:
  harm: {kind: yes_no, yes_means: risk}
nodes:
  root: {question: harm}
"""


def _wilson_at(variance: float) -> tuple[float, float]:
    rate = float(VALUES.mean())
    return wilson_cc_bounds(rate, rate * (1 - rate) / variance, 0.95)


def _double_counted() -> float:
    """Dialogues, then annotators again within each: the variance a second stage adds."""
    within = np.array([np.var(v) for v in VOTES]) / 3
    return float((np.var(VALUES) + within.mean()) / len(VALUES))


def test_a_keep_rate_resamples_dialogues_not_annotators() -> None:
    """The bootstrap over dialogues of their means has variance σ²/n (σ² the dialogue
    values' variance, n = 30): the interval is corrected Wilson at n_eff = r(1−r)/(σ²/n)."""
    data = DialogueLabels(KEYS, list(VALUES), LABELS)
    low, high, method = rate_interval(data, confidence=0.95, resamples=RESAMPLES, seed=3)
    by_hand = _wilson_at(float(np.var(VALUES)) / len(VALUES))
    assert method == bootstrap_method("dialogues")
    assert (low, high) == pytest.approx(by_hand, abs=0.002)
    doubled = _wilson_at(_double_counted())
    assert doubled[1] - doubled[0] > high - low + 0.02  # what drawing annotators gave


def test_a_keep_rate_over_testers_resamples_testers_with_all_their_labels() -> None:
    """Six testers of five dialogues: the variance is CR1's over the dialogue values,
    k/(k−1) · Σ_g (T_g − r·m_g)² / N², with T_g a tester's sum of dialogue values."""
    testers = [f"t{i // 5}" for i in range(len(KEYS))]
    data = DialogueLabels(KEYS, list(VALUES), LABELS, testers=testers)
    low, high, method = rate_interval(data, confidence=0.95, resamples=RESAMPLES, seed=3)
    totals = VALUES.reshape(6, 5).sum(axis=1)
    cr1 = 6 / 5 * float(((totals - VALUES.mean() * 5) ** 2).sum()) / 30**2
    assert method == bootstrap_method("testers", 6)
    assert (low, high) == pytest.approx(_wilson_at(cr1), abs=0.002)


def test_a_tree_node_over_several_annotators_resamples_testers_only() -> None:
    """The same labels as CoRIx leaves, one per annotator: the node (0–10) reads the rate's
    interval on its range, so its ends are ten times the hand-derived rate's."""
    rows = [(key, annotator, value) for key, annotator, value in LABELS]
    leaves = LeafTable.from_columns(
        application=np.full(len(rows), "app"),
        level=np.full(len(rows), "field_testing"),
        source=np.full(len(rows), "annotation"),
        question=np.full(len(rows), "harm"),
        dialogue_id=np.array([key for key, _, _ in rows]),
        annotator=np.array([annotator for _, annotator, _ in rows]),
        tester=np.array([f"t{int(key[1:]) // 5}" for key, _, _ in rows]),
        value=np.array(["yes" if value else "no" for _, _, value in rows]),
    )
    root = score_tree(parse_tree(NODE), leaves, bootstrap=TREE_RESAMPLES, seed=3)["app"]
    totals = VALUES.reshape(6, 5).sum(axis=1)
    cr1 = 6 / 5 * float(((totals - VALUES.mean() * 5) ** 2).sum()) / 30**2
    low, high = _wilson_at(cr1)
    assert root.value == pytest.approx(10 * VALUES.mean())
    assert (root.ci_low, root.ci_high) == pytest.approx((10 * low, 10 * high), abs=0.03)
