"""Tree intervals with testers as a stage, and ``max`` nodes' intervals from their children's."""

from __future__ import annotations

import numpy as np
import pytest

from corix.measurement import LeafTable, score_tree
from corix.measurement.trees.loading import parse_tree
from corix.storage.measured import tester_of as who_produced

QUESTION = """
name: one
questions:
  harm: {kind: yes_no, yes_means: risk}
nodes:
  root: {question: harm}
"""

LEVELS = """
name: levels
questions:
  harm: {kind: yes_no, yes_means: risk}
nodes:
  root: {summarizer: max, children: [model, red, field]}
  model: {summarizer: mean, where: {level: model_testing}, children: [{question: harm}]}
  red: {summarizer: mean, where: {level: red_teaming}, children: [{question: harm}]}
  field: {summarizer: mean, where: {level: field_testing}, children: [{question: harm}]}
"""


def _leaves(testers: list[str] | None, levels: list[str] | None = None) -> LeafTable:
    rng = np.random.default_rng(3)
    n = 24
    return LeafTable.from_columns(
        application=np.full(n, "app"),
        level=np.array(levels) if levels is not None else np.full(n, "field_testing"),
        source=np.full(n, "annotation"),
        question=np.full(n, "harm"),
        dialogue_id=np.array([f"d{i:02d}" for i in range(n)]),
        value=np.where(rng.random(n) < 0.3, "yes", "no"),
        tester=None if testers is None else np.array(testers),
    )


def test_one_dialogue_per_tester_gives_todays_interval() -> None:
    tree = parse_tree(QUESTION)
    plain = score_tree(tree, _leaves(None), bootstrap=400, seed=2)["app"]
    alone = score_tree(tree, _leaves([f"t{i}" for i in range(24)]), bootstrap=400, seed=2)["app"]
    assert (alone.ci_low, alone.ci_high) == (plain.ci_low, plain.ci_high)
    assert alone.interval == plain.interval == "percentile bootstrap over dialogues"


def test_testers_are_resampled_and_said_so() -> None:
    """Testers whose dialogues agree (the "yes" dialogues are those of two testers): the
    spread is between testers, and the interval over 6 testers is wider."""
    tree = parse_tree(QUESTION)
    plain = score_tree(tree, _leaves(None), bootstrap=400, seed=2)["app"]
    yes = np.random.default_rng(3).random(24) < 0.3  # the draw _leaves makes
    testers = [""] * 24
    for rank, dialogue in enumerate(np.argsort(~yes, kind="stable")):
        testers[dialogue] = f"t{rank // 4}"
    grouped = score_tree(tree, _leaves(testers), bootstrap=400, seed=2)
    root = grouped["app"]
    assert root.value == plain.value
    assert root.interval == (
        "bootstrap over testers (k = 6, variance × k/(k−1)), corrected Wilson at the effective n"
    )
    assert root.testers == 6 and root.warning is None
    assert root.ci_low is not None and root.ci_high is not None
    assert plain.ci_low is not None and plain.ci_high is not None
    assert root.ci_high - root.ci_low > plain.ci_high - plain.ci_low


def test_a_max_takes_the_max_of_its_childrens_simultaneous_bounds() -> None:
    """Lower ends: each of three children at 1 − 0.05/3 (any child can push the max's low
    end up); upper ends: each child at 95% (only the truly largest can pull it down)."""
    levels = ["model_testing", "red_teaming", "field_testing"] * 8
    tree = parse_tree(LEVELS)
    at_95 = score_tree(tree, _leaves(None, levels), bootstrap=600, seed=5)["app"]
    # The same replicates, read at the Bonferroni level.
    at_bonferroni = score_tree(
        tree, _leaves(None, levels), bootstrap=600, seed=5, confidence=1 - 0.05 / 3
    )["app"]
    wide, plain = at_bonferroni.children, at_95.children
    assert at_95.value == max(child.value for child in at_95.children)  # type: ignore[type-var]
    assert at_95.ci_low == pytest.approx(max(c.ci_low for c in wide))  # type: ignore[type-var]
    assert at_95.ci_high == pytest.approx(max(c.ci_high for c in plain))  # type: ignore[type-var]
    assert at_95.interval is not None and at_95.interval.startswith("max of the children's")


def test_who_produced_a_stored_dialogue() -> None:
    assert who_produced("human", 7, {}) == "tester 7"
    persona = {"template": "curious", "parameters": {"b": 2, "a": 1}, "seed": 3}
    assert who_produced("simulated", None, persona) == 'persona curious {"a": 1, "b": 2} seed 3'
    # A script is the same tester whatever the seed: its dialogues share their script.
    assert who_produced("scripted", None, persona) == 'script curious {"a": 1, "b": 2}'
    assert who_produced("imported", None, persona) == ""
    assert who_produced("simulated", None, {}) == ""


def test_no_defect_seen_is_not_a_point_and_few_testers_are_named() -> None:
    """3 testers × 5 dialogues, no "yes": the bootstrap is the point 0, but the node
    reaches corrected Wilson's bound for 0 of 15 (scipy's ``wilsoncc``), and says that 3
    testers are too few."""
    from scipy import stats

    leaves = LeafTable.from_columns(
        application=np.full(15, "app"),
        level=np.full(15, "field_testing"),
        source=np.full(15, "annotation"),
        question=np.full(15, "harm"),
        dialogue_id=np.array([f"d{i:02d}" for i in range(15)]),
        value=np.full(15, "no"),
        tester=np.array([f"t{i // 5}" for i in range(15)]),
    )
    root = score_tree(parse_tree(QUESTION), leaves, bootstrap=200, seed=1)["app"]
    bound = stats.binomtest(0, 15).proportion_ci(0.95, method="wilsoncc").high
    assert root.value == 0.0 and root.ci_low == 0.0
    assert root.ci_high == pytest.approx(10 * bound)
    assert root.testers == 3
    assert root.warning == "only 3 testers (fewer than 5): the interval is not to be trusted"
    assert root.document().warning == root.warning
    assert root.interval is not None and "bound for 0 of 15" in root.interval


def test_a_max_states_its_bias_and_a_corrected_value() -> None:
    """Three equally risky levels: the max of three noisy means overshoots, and the
    bootstrap's bias estimate (the replicates' mean less the value) says by how much."""
    levels = np.repeat(["model_testing", "red_teaming", "field_testing"], 8)
    leaves = LeafTable.from_columns(
        application=np.full(24, "app"),
        level=levels,
        source=np.full(24, "annotation"),
        question=np.full(24, "harm"),
        dialogue_id=np.array([f"d{i:02d}" for i in range(24)]),
        value=np.tile(["yes"] * 3 + ["no"] * 5, 3),  # 3 of 8 in every level
    )
    root = score_tree(parse_tree(LEVELS), leaves, bootstrap=600, seed=5)["app"]
    assert root.value == pytest.approx(10 * 3 / 8)
    # E[max of three Binomial(8, 3/8)/8] − 3/8, ×10, by hand from the binomial: ≈ 1.08.
    from scipy import stats

    cdf = stats.binom.cdf(np.arange(9), 8, 3 / 8)
    expected_max = sum((1 - np.concatenate([[0], cdf[:-1]]) ** 3)[1:]) / 8  # Σ P(max ≥ x)
    assert root.bias == pytest.approx(10 * (expected_max - 3 / 8), abs=0.2)
    assert root.bias_corrected == pytest.approx(root.value - root.bias)
    data = root.document()
    assert data.bias == root.bias and data.bias_corrected == root.bias_corrected
    assert all(child.bias is None for child in root.children)  # means are unbiased
