"""Leaf tables from rows, CSV and arrays; bad rows are named by number."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from corix.measurement import LeafTable, TreeSpec, score_tree
from corix.measurement.trees.leaves import LeafError

MakeLeaves = Callable[[Sequence[tuple[str, ...]]], LeafTable]


def test_rows_are_coded_in_sorted_order(small_leaves: LeafTable) -> None:
    assert small_leaves.application.categories == ("A", "B")
    assert len(small_leaves) == 13
    first = small_leaves.question.categories[small_leaves.question.codes[0]]
    assert first == "harm"
    assert small_leaves.scenario.categories == ("",)  # optional column absent


def test_csv_matches_rows(small_csv_path: Path, small_leaves: LeafTable) -> None:
    from_csv = LeafTable.from_csv(small_csv_path)
    assert from_csv.value.categories == small_leaves.value.categories
    np.testing.assert_array_equal(from_csv.dialogue_id.codes, small_leaves.dialogue_id.codes)
    assert from_csv.describe_row(0) == f"{small_csv_path} row 1 (line 2)"


def test_out_of_scale_leaf_names_row_and_question(
    small_tree: TreeSpec, make_leaves: MakeLeaves
) -> None:
    leaves = make_leaves(
        [
            ("A", "model_testing", "annotation", "useful", "d1", "3"),
            ("A", "model_testing", "annotation", "harm", "d1", "no"),
            ("A", "model_testing", "annotation", "useful", "d2", "11"),
        ]
    )
    with pytest.raises(LeafError) as caught:
        score_tree(small_tree, leaves)
    message = str(caught.value)
    assert message.startswith("leaves row 3: question 'useful' value '11'")
    assert "from 1 to 10" in message


@pytest.mark.parametrize(
    ("question", "value", "reason"),
    [
        ("harm", "maybe", "expected yes or no"),
        ("liked", "3.5", "whole number from 1 to 5"),
        ("liked", "0", "from 1 to 5"),
        ("useful", "lots", "expected a number"),
        ("useful", "", "has no value"),
    ],
)
def test_each_mapping_rejects_values_outside_its_input(
    small_tree: TreeSpec, make_leaves: MakeLeaves, question: str, value: str, reason: str
) -> None:
    leaves = make_leaves([("A", "field_testing", "questionnaire", question, "d1", value)])
    with pytest.raises(LeafError, match=reason) as caught:
        score_tree(small_tree, leaves)
    assert f"row 1: question '{question}'" in str(caught.value)


def test_out_of_scale_in_csv_gives_the_line(small_tree: TreeSpec, tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(
        "application,level,source,question,dialogue_id,value,scenario\n"
        "A,model_testing,annotation,harm,d1,yes,meal_planner\n"
        "A,model_testing,annotation,harm,d2,perhaps,meal_planner\n",
        encoding="utf-8",
    )
    with pytest.raises(LeafError, match=r"bad\.csv row 2 \(line 3\): question 'harm'"):
        score_tree(small_tree, LeafTable.from_csv(path))


def test_csv_structure_errors(tmp_path: Path) -> None:
    missing = tmp_path / "missing.csv"
    missing.write_text("application,level,question,dialogue_id,value\n", encoding="utf-8")
    with pytest.raises(LeafError, match=r"line 1: header lacks column.*source"):
        LeafTable.from_csv(missing)
    short = tmp_path / "short.csv"
    short.write_text(
        "application,level,source,question,dialogue_id,value\nA,model_testing,annotation\n",
        encoding="utf-8",
    )
    with pytest.raises(LeafError, match="line 2: too few cells"):
        LeafTable.from_csv(short)
    with pytest.raises(LeafError, match="cannot read"):
        LeafTable.from_csv(tmp_path / "absent.csv")


def test_unknown_level_or_source_names_the_row(make_leaves: MakeLeaves) -> None:
    with pytest.raises(LeafError, match="row 2: level 'lab' is not one of model_testing"):
        make_leaves(
            [
                ("A", "model_testing", "annotation", "harm", "d1", "yes"),
                ("A", "lab", "annotation", "harm", "d1", "yes"),
            ]
        )
    with pytest.raises(LeafError, match="row 1: source 'human' is not one of annotation"):
        make_leaves([("A", "model_testing", "human", "harm", "d1", "yes")])
    with pytest.raises(LeafError, match="row 1: dialogue_id '' is not a non-empty value"):
        make_leaves([("A", "model_testing", "annotation", "harm", "", "yes")])


def test_missing_key_in_rows() -> None:
    with pytest.raises(LeafError, match="row 1: missing dialogue_id"):
        LeafTable.from_rows(
            [{"application": "A", "level": "model_testing", "source": "annotation",
              "question": "harm", "value": True}]
        )  # fmt: skip


def test_columns_keep_numbers_and_booleans_read_as_yes_no(small_tree: TreeSpec) -> None:
    leaves = LeafTable.from_columns(
        application=["A", "A", "A"],
        level=["model_testing"] * 3,
        source=["annotation"] * 3,
        question=["useful", "useful", "useful"],
        dialogue_id=[1, 2, 3],
        value=np.array([1.0, 10.0, 4.0]),
    )
    assert leaves.value.categories == (1.0, 4.0, 10.0)
    assert score_tree(small_tree, leaves)["A"].find("usefulness").value == pytest.approx(
        (10 + 0 + 20 / 3) / 3
    )
    rows = LeafTable.from_rows(
        [
            {"application": "A", "level": "model_testing", "source": "annotation",
             "question": "harm", "dialogue_id": "d1", "value": True},
        ]
    )  # fmt: skip
    assert rows.value.categories == ("yes",)
