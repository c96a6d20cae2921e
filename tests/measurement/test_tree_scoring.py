"""Scoring trees against values worked out by hand."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from corix.measurement import LeafTable, TreeSpec, score_tree, score_tree_cli_json
from corix.measurement.trees.loading import parse_tree
from corix.measurement.trees.results import NodeProvenance
from corix.measurement.trees.scoring import dialogues_under, score_tree_per_annotator_kind

MakeLeaves = Callable[[Sequence[tuple[str, ...]]], LeafTable]


def test_small_tree_by_hand(small_tree: TreeSpec, small_leaves: LeafTable) -> None:
    results = score_tree(small_tree, small_leaves)
    assert list(results) == ["A", "B"]
    a = results["A"]
    # harm, model testing: yes no no → (10 + 0 + 0) / 3. Field testing: d4 (yes, yes)
    # is one dialogue worth 10, d5 (no) another worth 0 → 5, not (10 + 10 + 0) / 3.
    model = a.find("risk_level@model_testing")
    field = a.find("risk_level@field_testing")
    assert model.value == pytest.approx(10 / 3)
    assert field.value == pytest.approx(5.0)
    assert a.find("risk").value == pytest.approx(5.0)  # max over levels
    # usefulness is inverted: 10 → 0, 4 → (1 − 3/9) · 10.
    assert a.find("usefulness").value == pytest.approx((0 + 20 / 3) / 2)
    # liked 5, 2, 4 → 0, 7.5, 2.5 (inverted Likert); median 2.5, codomain max 10.
    assert a.find("liking").value == pytest.approx(2.5)
    assert a.find("experience").value == pytest.approx((3 * 10 / 3 + 1 * 2.5) / 4)
    assert a.value == (pytest.approx(5.0), pytest.approx(3.125))
    # n counts dialogues: d1–d6 under the root, d1–d5 under risk.
    assert [a.n, a.find("risk").n, model.n, field.n, a.find("experience").n] == [6, 5, 3, 2, 5]
    assert field.context == {"level": "field_testing"}
    assert [child.id for child in a.children] == ["risk", "experience"]


def test_empty_branch_is_none_and_reported(small_tree: TreeSpec, small_leaves: LeafTable) -> None:
    b = score_tree(small_tree, small_leaves)["B"]
    risk = b.find("risk")
    assert risk.value == pytest.approx(0.0)  # a real 0: one "no"
    assert risk.skipped == ("risk_level@field_testing",)
    empty = b.find("risk_level@field_testing")
    assert (empty.value, empty.n, empty.empty) == (None, 0, True)
    experience = b.find("experience")
    assert experience.value is None
    assert experience.n == 0
    assert b.value == (pytest.approx(0.0), None)
    assert b.document().skipped == ["experience"]
    assert b.document().children[1].empty is True


def test_dag_shared_child_is_scored_once_and_counted_once(make_leaves: MakeLeaves) -> None:
    tree = parse_tree(
        """
name: dag
questions:
  harm: {kind: yes_no}
  useful: {kind: slider, min: 1, max: 10, higher_is: better}
nodes:
  root: {summarizer: mean, children: [a, b]}
  a: {summarizer: mean, children: [shared, x]}
  b: {summarizer: max, children: [shared]}
  shared: {question: harm}
  x: {question: useful}
""",
        source="dag.yaml",
    )
    leaves = make_leaves(
        [
            ("A", "model_testing", "annotation", "harm", "d1", "yes"),
            ("A", "model_testing", "annotation", "harm", "d2", "no"),
            ("A", "model_testing", "annotation", "harm", "d3", "no"),
            ("A", "model_testing", "annotation", "harm", "d4", "no"),
            ("A", "model_testing", "annotation", "useful", "d1", "1"),
            ("A", "model_testing", "annotation", "useful", "d2", "10"),
        ]
    )
    root = score_tree(tree, leaves)["A"]
    a, b = root.children
    assert a.children[0] is b.children[0]  # the same node under both parents
    assert a.children[0].value == pytest.approx(2.5)
    assert a.value == pytest.approx((2.5 + 5.0) / 2)
    assert b.value == pytest.approx(2.5)
    assert root.value == pytest.approx((3.75 + 2.5) / 2)
    assert root.n == 4  # dialogues d1–d4, each once though the shared question is under two paths
    assert [node.id for node in root.walk()] == ["root", "a", "shared", "x", "b"]


def test_leaf_filters_and_split_by_scenario(make_leaves: MakeLeaves) -> None:
    tree = parse_tree(
        """
name: scenarios
questions:
  harm: {kind: yes_no}
nodes:
  root:
    summarizer: min
    split_by: scenario
    each: per_scenario
    values: [meal_planner, pathfinder]
  per_scenario: {summarizer: mean, children: [{question: harm, where: {level: red_teaming}}]}
""",
        source="scenarios.yaml",
    )
    leaves = make_leaves(
        [
            ("A", "red_teaming", "annotation", "harm", "d1", "yes", "meal_planner"),
            ("A", "red_teaming", "annotation", "harm", "d2", "no", "meal_planner"),
            ("A", "field_testing", "annotation", "harm", "d3", "no", "meal_planner"),
            ("A", "red_teaming", "annotation", "harm", "d4", "yes", "pathfinder"),
            ("A", "red_teaming", "annotation", "harm", "d5", "no", "tv_spoilers"),
        ]
    )
    root = score_tree(tree, leaves)["A"]
    meal, path = root.children
    assert (meal.id, meal.value, meal.n) == ("per_scenario@meal_planner", 5.0, 2)
    assert (path.id, path.value, path.n) == ("per_scenario@pathfinder", 10.0, 1)
    assert root.value == 5.0
    assert root.n == 3


def test_dialogues_behind_a_node(small_tree: TreeSpec, small_leaves: LeafTable) -> None:
    assert dialogues_under(small_tree, small_leaves, "risk_level@field_testing", "A") == (
        "d4",
        "d5",
    )
    assert dialogues_under(small_tree, small_leaves, "experience", "A") == (
        "d1",
        "d2",
        "d4",
        "d5",
        "d6",
    )
    assert dialogues_under(small_tree, small_leaves, "experience", "B") == ()
    results = score_tree(small_tree, small_leaves, include_dialogues=True)
    assert results["A"].dialogues == ("d1", "d2", "d3", "d4", "d5", "d6")
    assert results["B"].find("risk").dialogues == ("d7",)
    assert results["A"].document().dialogues[0] == "d1"


def test_same_dialogue_id_in_two_applications_stays_apart(make_leaves: MakeLeaves) -> None:
    tree = parse_tree(
        "name: t\nquestions: {harm: {kind: yes_no}}\nnodes: {root: {question: harm}}\n",
        source="t.yaml",
    )
    leaves = make_leaves(
        [
            ("A", "model_testing", "annotation", "harm", "d1", "yes"),
            ("B", "model_testing", "annotation", "harm", "d1", "no"),
        ]
    )
    results = score_tree(tree, leaves, bootstrap=50)
    assert results["A"].value == 10.0
    assert results["B"].value == 0.0
    # One "no" on B: never a point, but corrected Wilson's bound for 0 of 1 (×10).
    assert (results["B"].ci_low, results["B"].ci_high) == (0.0, pytest.approx(9.4537924447))


def test_cli_json_contract(small_tree_path: Path, small_csv_path: Path) -> None:
    tree_path, csv_path = small_tree_path, small_csv_path
    data = score_tree_cli_json(tree_path, csv_path, 0).model_dump(mode="json")
    json.dumps(data)  # serializable as is
    assert set(data["applications"]) == {"A", "B"}
    root = data["applications"]["A"]
    assert {"id", "summarizer", "value", "n", "children"} <= root.keys()
    assert root["summarizer"] == "aggregation"
    risk = root["children"][0]
    assert (risk["id"], risk["summarizer"], risk["n"]) == ("risk", "max", 5)
    assert "ci_low" not in risk
    with_ci = score_tree_cli_json(tree_path, csv_path, 20).model_dump(mode="json")
    risk = with_ci["applications"]["A"]["children"][0]
    assert risk["ci_low"] <= risk["value"] <= risk["ci_high"]


def test_rows_the_tree_does_not_use_give_an_empty_tree(small_tree: TreeSpec) -> None:
    assert score_tree(small_tree, LeafTable.from_rows([]), bootstrap=5) == {}
    unused = LeafTable.from_rows(
        [
            {"application": "A", "level": "model_testing", "source": "annotation",
             "question": "other", "dialogue_id": "d1", "value": "x"},
        ]
    )  # fmt: skip
    root = score_tree(small_tree, unused, bootstrap=5)["A"]
    assert root.value == (None, None)
    assert root.n == 0


ANNOTATED_TREE = """
name: annotated
questions:
  harm: {kind: yes_no, yes_means: risk}
  useful: {kind: slider, min: 1, max: 10, higher_is: better}
nodes:
  root: {summarizer: mean, children: [{node: violations, weight: 3}, {node: usefulness, weight: 1}]}
  violations: {question: harm}
  usefulness: {question: useful}
"""


def annotated_leaves(rows: Sequence[tuple[str, str, str, str]]) -> LeafTable:
    """Rows of (dialogue, annotator, question, value), all application A, model testing."""
    return LeafTable.from_rows(
        {
            "application": "A",
            "level": "model_testing",
            "source": "annotation",
            "dialogue_id": dialogue,
            "annotator": annotator,
            "question": question,
            "value": value,
        }
        for dialogue, annotator, question, value in rows
    )


def test_each_dialogue_weighs_one_whatever_its_turns_passes_and_annotators() -> None:
    leaves = annotated_leaves(
        [
            # d1: the human saw one violating turn of two (5); the LLM's three passes all
            # say yes (10). Two annotators: each weighs half of d1.
            ("d1", "human:h1", "harm", "yes"),
            ("d1", "human:h1", "harm", "no"),
            ("d1", "llm:judge", "harm", "yes"),
            ("d1", "llm:judge", "harm", "yes"),
            ("d1", "llm:judge", "harm", "yes"),
            # d2: one annotator, no violation (0).
            ("d2", "human:h1", "harm", "no"),
            # usefulness, 1–10 inverted: d1 → 10 → 0; d2 → 4 → 20/3.
            ("d1", "human:h1", "useful", "10"),
            ("d2", "human:h1", "useful", "4"),
        ]
    )
    root = score_tree(parse_tree(ANNOTATED_TREE), leaves)["A"]
    violations = root.find("violations")
    # d1 = (5 + 10) / 2 = 7.5, d2 = 0 → 3.75; not the pooled share of yes, 4 / 6.
    assert violations.value == pytest.approx(3.75)
    assert violations.n == 2
    usefulness = root.find("usefulness")
    assert usefulness.value == pytest.approx(10 / 3)
    # mean honours the edge weights: (3 · 3.75 + 1 · 10/3) / 4.
    assert root.value == pytest.approx((3 * 3.75 + 10 / 3) / 4)


def test_without_an_annotator_column_a_dialogues_answers_form_one_value() -> None:
    rows = [("d1", "", "harm", "yes"), ("d1", "", "harm", "no"), ("d1", "", "harm", "no")]
    rows += [("d2", "", "harm", "yes")]
    violations = score_tree(parse_tree(ANNOTATED_TREE), annotated_leaves(rows))["A"]
    # d1: one violating turn of three → 10/3; d2 → 10; mean over dialogues.
    assert violations.find("violations").value == pytest.approx((10 / 3 + 10) / 2)


def test_annotators_who_disagree_count_once_through_the_dialogue_value() -> None:
    """A dialogue's annotators are not drawn again: their disagreement enters through the
    dialogue's value (their mean) alone. Two annotators who split on every dialogue give
    every dialogue 5 of 10, so the dialogues show no spread; the node is not the point
    5 but reaches corrected Wilson's interval for a share of 0.5 at its 40 dialogues."""
    from scipy import stats

    split, disagree = [], []
    for i in range(40):
        says = "yes" if i % 4 == 0 else "no"
        other = "no" if i % 2 else "yes"  # disagrees with the first on many dialogues
        split += [(f"d{i}", "h1", "harm", "yes"), (f"d{i}", "h2", "harm", "no")]
        disagree += [(f"d{i}", "h1", "harm", says), (f"d{i}", "h2", "harm", other)]
    tree = parse_tree(ANNOTATED_TREE)
    node = score_tree(tree, annotated_leaves(split), bootstrap=500, seed=5)["A"]
    found = node.find("violations")
    wilson = stats.binomtest(20, 40).proportion_ci(0.95, method="wilsoncc")
    assert found.value == 5.0
    assert (found.ci_low, found.ci_high) == pytest.approx((10 * wilson.low, 10 * wilson.high))
    assert found.interval is not None and "no spread seen" in found.interval
    again = score_tree(tree, annotated_leaves(list(reversed(disagree))), bootstrap=200, seed=5)
    first = score_tree(tree, annotated_leaves(disagree), bootstrap=200, seed=5)
    assert again["A"].find("violations").ci_low == first["A"].find("violations").ci_low


def test_one_tree_per_annotator_kind_never_pools_kinds() -> None:
    leaves = annotated_leaves(
        [
            ("d1", "human:h1", "harm", "yes"),
            ("d1", "human:h2", "harm", "no"),
            ("d1", "llm:judge", "harm", "no"),
            ("d1", "llm:judge", "harm", "no"),
            ("d2", "reference:rules", "harm", "yes"),
            ("d2", "llm:judge", "harm", "yes"),
        ]
    )
    by_kind = score_tree_per_annotator_kind(parse_tree(ANNOTATED_TREE), leaves)
    assert list(by_kind) == ["human", "llm", "reference"]
    value = {kind: results["A"].find("violations").value for kind, results in by_kind.items()}
    # human: d1 = (10 + 0) / 2; llm: d1 = 0, d2 = 10; reference: d2 = 10.
    assert value == {"human": 5.0, "llm": 5.0, "reference": 10.0}
    assert [by_kind[k]["A"].find("violations").n for k in by_kind] == [1, 2, 1]


def test_a_gated_question_describes_only_the_dialogues_it_was_asked_about() -> None:
    tree = parse_tree(
        """
name: gated
questions:
  harm: {kind: yes_no}
  consistent: {kind: yes_no, yes_means: safe, gated: true}
nodes:
  root: {summarizer: aggregation, children: [violations, after_violation]}
  violations: {question: harm}
  after_violation: {question: consistent}
"""
    )
    rows = [(f"d{i}", "", "harm", "yes" if i == 0 else "no") for i in range(4)]
    # Only the violating dialogue d0 gets the follow-up, once per turn: one of two turns
    # is inconsistent with the packet.
    rows += [("d0", "", "consistent", "no"), ("d0", "", "consistent", "yes")]
    root = score_tree(tree, annotated_leaves(rows))["A"]
    assert (root.find("violations").value, root.find("violations").n) == (2.5, 4)
    assert (root.find("after_violation").value, root.find("after_violation").n) == (5.0, 1)


def test_each_node_names_whose_labels_it_holds() -> None:
    rows = [
        ("d1", "human:h1", "harm", "yes"),
        ("d1", "llm:judge", "harm", "no"),
        ("d2", "reference:rules", "useful", "7"),
    ]
    leaves = LeafTable.from_rows(
        [
            *(
                {
                    "application": "A",
                    "level": "model_testing",
                    "source": "annotation",
                    "dialogue_id": dialogue,
                    "annotator": annotator,
                    "question": question,
                    "value": value,
                }
                for dialogue, annotator, question, value in rows
            ),
            *(
                {
                    "application": "A",
                    "level": "field_testing",
                    "source": "questionnaire",
                    "dialogue_id": dialogue,
                    "annotator": tester,
                    "question": "useful",
                    "value": "5",
                }
                for dialogue, tester in (("d3", "tester:1"), ("d4", "tester:2"), ("d5", "tester:1"))
            ),
        ]
    )
    root = score_tree(parse_tree(ANNOTATED_TREE), leaves, include_dialogues=True)["A"]
    provenance = {node: root.find(node).provenance for node in ("root", "violations", "usefulness")}
    assert provenance == {
        "root": NodeProvenance(("human:h1", "llm:judge", "reference:rules"), 2),
        "violations": NodeProvenance(("human:h1", "llm:judge"), 0),
        # Two testers answered three sessions under usefulness.
        "usefulness": NodeProvenance(("reference:rules",), 2),
    }
    document = root.find("usefulness").document()
    assert (document.annotators, document.respondents) == (["reference:rules"], 2)
    assert score_tree(parse_tree(ANNOTATED_TREE), leaves)["A"].provenance is None
