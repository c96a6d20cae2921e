"""Tree files are checked on load; every error names the file, the node and the line."""

from __future__ import annotations

import re

import pytest

from corix.errors import ConfigError, UnknownNameError
from corix.measurement.trees.loading import parse_tree

QUESTIONS = """\
name: t
questions:
  harm: {kind: yes_no}
  useful: {kind: slider, min: 1, max: 10, higher_is: better}
"""


def error_for(nodes: str, questions: str = QUESTIONS) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_tree(questions + nodes, source="t.yaml")
    return caught.value


def test_cycle_is_named_in_order() -> None:
    error = error_for(
        """\
nodes:
  root: {summarizer: mean, children: [a]}
  a: {summarizer: mean, children: [b]}
  b: {summarizer: mean, children: [c]}
  c: {summarizer: mean, children: [a, leaf]}
  leaf: {question: harm}
"""
    )
    assert "cycle: a → b → c → a" in str(error)
    assert (error.path, error.field, error.line) == ("t.yaml", "nodes.a", 7)


def test_self_loop_is_a_cycle() -> None:
    error = error_for("nodes:\n  root: {summarizer: mean, children: [root]}\n")
    assert "cycle: root → root" in str(error)


def test_negative_weight_is_rejected_with_its_line() -> None:
    error = error_for(
        """\
nodes:
  root:
    summarizer: weighted_mean
    children:
      - {node: leaf, weight: 1}
      - {node: leaf2, weight: -0.5}
  leaf: {question: harm}
  leaf2: {question: useful}
"""
    )
    assert error.field == "nodes.root.children.1.weight"
    assert error.line == 10
    assert "≥ 0" in str(error)
    assert "t.yaml:10" in str(error)


def test_negative_split_weight_is_rejected() -> None:
    error = error_for(
        """\
nodes:
  root: {split_by: level, each: leaf, weights: {red_teaming: -1}}
  leaf: {question: harm}
"""
    )
    assert error.field == "nodes.root.weights"
    assert "zero is allowed" in str(error)


def test_zero_weight_is_allowed() -> None:
    tree = parse_tree(
        QUESTIONS
        + """\
nodes:
  root: {summarizer: weighted_mean, children: [{node: leaf, weight: 0}, leaf2]}
  leaf: {question: harm}
  leaf2: {question: useful}
""",
        source="t.yaml",
    )
    assert tree.root.weights == (0.0, 1.0)


def test_unknown_question_names_the_node() -> None:
    error = error_for(
        """\
nodes:
  root: {summarizer: mean, children: [leaf]}
  leaf: {question: harms}
"""
    )
    assert "node 'leaf'" in str(error)
    assert "unknown question 'harms'" in str(error)
    assert "Did you mean 'harm'?" in str(error)
    assert (error.field, error.line) == ("nodes.leaf.question", 7)


def test_unknown_inline_question_names_its_parent() -> None:
    error = error_for("nodes:\n  root: {summarizer: mean, children: [{question: nope}]}\n")
    assert "node 'root.nope'" in str(error)
    assert error.field == "nodes.root.children.0.question"


def test_unknown_summarizer_names_the_node() -> None:
    error = error_for(
        """\
nodes:
  root: {summarizer: maximum, children: [leaf]}
  leaf: {question: harm}
"""
    )
    assert "node 'root': unknown summarizer 'maximum'" in str(error)
    assert (error.field, error.line) == ("nodes.root.summarizer", 6)


def test_summarizer_parameters_are_validated() -> None:
    error = error_for("nodes:\n  root: {summarizer: share_above, children: [{question: harm}]}\n")
    assert "node 'root'" in str(error)
    assert error.field == "nodes.root.params.threshold"
    error = error_for(
        "nodes:\n  root: {summarizer: max, params: {threshold: 1}, children: [{question: harm}]}\n"
    )
    assert error.field == "nodes.root.params.threshold"


def test_unknown_child_and_unreachable_node() -> None:
    error = error_for("nodes:\n  root: {summarizer: mean, children: [ghost]}\n")
    assert "child 'ghost' is not defined" in str(error)
    error = error_for("nodes:\n  root: {question: harm}\n  stray: {question: harm}\n")
    assert "node 'stray' is not reachable" in str(error)
    assert error.line == 7


def test_node_needs_exactly_one_kind() -> None:
    error = error_for("nodes:\n  root: {question: harm, children: []}\n")
    assert "exactly one of 'question', 'children' or 'split_by'" in str(error)
    assert error.field == "nodes.root"


def test_split_values_must_belong_to_the_column() -> None:
    error = error_for(
        "nodes:\n  root: {split_by: level, values: [lab_testing], each: leaf}\n"
        "  leaf: {question: harm}\n"
    )
    assert "'lab_testing' is not a level" in str(error)
    error = error_for(
        "nodes:\n  root: {split_by: scenario, each: leaf}\n  leaf: {question: harm}\n"
    )
    assert "needs the 'values'" in str(error)


def test_numeric_node_cannot_summarize_an_aggregation() -> None:
    error = error_for(
        """\
nodes:
  root: {summarizer: max, children: [group]}
  group: {summarizer: aggregation, children: [{question: harm}]}
"""
    )
    assert "'max' needs numbers, but child 'group' is an aggregation" in str(error)


def test_scale_normalized_median_needs_a_positive_maximum() -> None:
    error = error_for(
        "nodes:\n  root: {summarizer: scale_normalized_median, children: [{question: c}]}\n",
        questions="name: t\nquestions:\n  c: {kind: choice, values: {a: 0, b: 0}}\n",
    )
    assert "positive and finite" in str(error)
    assert "node 'root'" in str(error)


def test_choice_table_must_lie_on_the_scale() -> None:
    error = error_for(
        "nodes:\n  root: {question: c}\n",
        questions="name: t\nquestions:\n  c: {kind: choice, values: {a: 0, b: 12}}\n",
    )
    assert error.field == "questions.c.values"
    assert "outside the tree's scale" in str(error)


def test_yaml_level_errors_name_the_line() -> None:
    error = error_for(
        "nodes:\n  root: {question: harm}\n",
        questions="name: t\nquestions:\n  harm: {kind: yes_no, yes_means: maybe}\n",
    )
    assert error.field == "questions.harm.yes_no.yes_means"
    assert error.line == 3


def test_unknown_builtin_tree_suggests_a_name() -> None:
    from corix.measurement import load_tree

    with pytest.raises(UnknownNameError, match=re.escape("Did you mean 'aria_pilot'?")):
        load_tree("aria_pilo")


GATED_QUESTIONS = """\
name: t
questions:
  harm: {kind: yes_no}
  consistent: {kind: yes_no, yes_means: safe, gated: true}
  followup: {kind: yes_no, gated: true}
"""


def test_a_gated_question_cannot_join_questions_asked_of_every_dialogue() -> None:
    error = error_for(
        """\
nodes:
  root: {summarizer: aggregation, children: [labels]}
  labels:
    summarizer: max
    children:
      - question: harm
      - question: consistent
""",
        GATED_QUESTIONS,
    )
    assert "node 'labels' summarizes gated question(s) consistent" in str(error)
    assert (error.field, error.line) == ("nodes.labels", 9)  # where its body starts


def test_the_mix_is_found_above_intermediate_nodes() -> None:
    error = error_for(
        """\
nodes:
  root: {summarizer: mean, children: [violations, after]}
  violations: {question: harm}
  after: {summarizer: mean, children: [{question: consistent}, {question: followup}]}
""",
        GATED_QUESTIONS,
    )
    assert "node 'root' summarizes gated question(s) consistent, followup" in str(error)


def test_gated_questions_may_be_summarized_together_or_kept_beside_others() -> None:
    tree = parse_tree(
        GATED_QUESTIONS
        + """\
nodes:
  root: {summarizer: aggregation, children: [violations, after]}
  violations: {question: harm}
  after: {summarizer: mean, children: [{question: consistent}, {question: followup}]}
""",
        source="t.yaml",
    )
    assert [tree.nodes[c].id for c in tree.root.children] == ["violations", "after"]


def test_a_summarizer_that_ignores_weights_refuses_them() -> None:
    error = error_for(
        """\
nodes:
  root: {summarizer: max, children: [{node: leaf, weight: 2}, leaf2]}
  leaf: {question: harm}
  leaf2: {question: useful}
"""
    )
    assert "'max' ignores edge weights, but 'leaf' has weight 2" in str(error)
    assert error.field == "nodes.root.children.0"
    error = error_for(
        """\
nodes:
  root: {summarizer: median, split_by: level, each: leaf, weights: {red_teaming: 3}}
  leaf: {question: harm}
"""
    )
    assert error.field == "nodes.root.weights.red_teaming"


def test_mean_takes_weights() -> None:
    tree = parse_tree(
        QUESTIONS
        + """\
nodes:
  root: {summarizer: mean, children: [{node: leaf, weight: 3}, leaf2]}
  leaf: {question: harm}
  leaf2: {question: useful}
""",
        source="t.yaml",
    )
    assert tree.root.weights == (3.0, 1.0)
