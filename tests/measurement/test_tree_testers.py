"""Tree intervals with testers as a stage, and ``max`` nodes' simultaneous intervals."""

from __future__ import annotations

import numpy as np
import pytest

from corix.measurement import LeafTable, score_tree
from corix.measurement.tree_loading import parse_tree
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
    tree = parse_tree(QUESTION)
    plain = score_tree(tree, _leaves(None), bootstrap=400, seed=2)["app"]
    grouped = score_tree(tree, _leaves([f"t{i // 4}" for i in range(24)]), bootstrap=400, seed=2)
    root = grouped["app"]
    assert root.value == plain.value
    assert root.interval == "expanded percentile bootstrap over testers → dialogues (6 testers)"
    assert root.ci_low is not None and root.ci_high is not None
    assert plain.ci_low is not None and plain.ci_high is not None
    assert root.ci_high - root.ci_low > plain.ci_high - plain.ci_low


def test_a_max_takes_the_max_of_its_childrens_simultaneous_bounds() -> None:
    levels = ["model_testing", "red_teaming", "field_testing"] * 8
    tree = parse_tree(LEVELS)
    at_95 = score_tree(tree, _leaves(None, levels), bootstrap=600, seed=5)["app"]
    # Each of three children at 1 − 0.05/3: the same replicates, read at that level.
    at_bonferroni = score_tree(
        tree, _leaves(None, levels), bootstrap=600, seed=5, confidence=1 - 0.05 / 3
    )["app"]
    children = at_bonferroni.children
    assert at_95.value == max(child.value for child in at_95.children)  # type: ignore[type-var]
    assert at_95.ci_low == pytest.approx(max(c.ci_low for c in children))  # type: ignore[type-var]
    assert at_95.ci_high == pytest.approx(max(c.ci_high for c in children))  # type: ignore[type-var]
    assert at_95.interval is not None and at_95.interval.startswith("max of the children's")


def test_who_produced_a_stored_dialogue() -> None:
    assert who_produced("human", 7, {}) == "tester 7"
    persona = {"template": "curious", "parameters": {"b": 2, "a": 1}, "seed": 3}
    assert who_produced("simulated", None, persona) == 'persona curious {"a": 1, "b": 2} seed 3'
    # A script is the same tester whatever the seed: its dialogues share their script.
    assert who_produced("scripted", None, persona) == 'script curious {"a": 1, "b": 2}'
    assert who_produced("imported", None, persona) == ""
    assert who_produced("simulated", None, {}) == ""
