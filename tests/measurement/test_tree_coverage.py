"""Simulated coverage of the tree's bootstrap intervals at nominal 95 %.

Every simulated evaluation is one application of a single table, so one ``score_tree``
call scores all of them (the bootstrap resamples within each application). Dialogue d
has a latent violation probability p_d ~ Beta(2, 4); each of its annotators says "yes"
with probability p_d, independently, so annotators of one dialogue disagree. The node
reduces each dialogue to its annotators' mean and averages dialogues: its true value is
10 · E[p] = 10 · 2 / 6.
"""

from __future__ import annotations

import numpy as np
import pytest

from corix.measurement import LeafTable, score_tree
from corix.measurement.trees.loading import parse_tree

TREE = """
name: coverage
questions:
  harm: {kind: yes_no, yes_means: risk}
nodes:
  root: {question: harm}
"""
TRUE_VALUE = 10 * 2 / 6
SIMULATIONS = 400
REPLICATES = 999


def simulate(n_dialogues: int, n_annotators: int, seed: int) -> LeafTable:
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 4, size=(SIMULATIONS, n_dialogues, 1))
    says_yes = rng.random((SIMULATIONS, n_dialogues, n_annotators)) < p
    shape = says_yes.shape
    simulation, dialogue, annotator = np.indices(shape).reshape(3, -1)
    return LeafTable.from_columns(
        application=np.char.add("sim", simulation.astype(str)),
        level=np.full(says_yes.size, "model_testing"),
        source=np.full(says_yes.size, "annotation"),
        question=np.full(says_yes.size, "harm"),
        dialogue_id=np.char.add("d", dialogue.astype(str)),
        annotator=np.char.add("a", annotator.astype(str)),
        value=np.where(says_yes.ravel(), "yes", "no"),
    )


@pytest.mark.parametrize(
    ("n_dialogues", "n_annotators"),
    [
        pytest.param(30, 1, id="30 dialogues, one annotator"),
        pytest.param(30, 3, id="30 dialogues, three disagreeing"),
        pytest.param(60, 2, id="60 dialogues, two", marks=pytest.mark.slow),  # 10 s on CI
    ],
)
def test_interval_covers_the_true_value_at_nominal_rate(
    n_dialogues: int, n_annotators: int
) -> None:
    leaves = simulate(n_dialogues, n_annotators, seed=n_dialogues * 10 + n_annotators)
    results = score_tree(parse_tree(TREE), leaves, bootstrap=REPLICATES, seed=1)
    lows = np.array([root.ci_low for root in results.values()], dtype=float)
    highs = np.array([root.ci_high for root in results.values()], dtype=float)
    coverage = float(np.mean((lows <= TRUE_VALUE) & (highs >= TRUE_VALUE)))
    print(f"coverage {coverage:.3f} ({n_dialogues} dialogues × {n_annotators} annotators)")
    assert coverage >= 0.93
