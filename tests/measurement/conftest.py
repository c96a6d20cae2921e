"""Shared fixtures: a small tree whose scores are derived by hand in test_scoring.py."""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from corix.measurement import LeafTable, TreeSpec
from corix.measurement.trees.loading import parse_tree

SMALL_TREE = """\
name: small
scale: {min: 0, max: 10}
questions:
  harm: {kind: yes_no, yes_means: risk}
  useful: {kind: slider, min: 1, max: 10, higher_is: better}
  liked: {kind: likert, min: 1, max: 5, higher_is: better, summarizer: scale_normalized_median}
nodes:
  root: {summarizer: aggregation, children: [risk, experience]}
  risk:
    summarizer: max
    split_by: level
    values: [model_testing, field_testing]
    each: risk_level
  risk_level:
    summarizer: mean
    children:
      - question: harm
  experience:
    summarizer: weighted_mean
    children:
      - {node: usefulness, weight: 3}
      - {node: liking, weight: 1}
  usefulness: {question: useful}
  liking: {question: liked, where: {source: questionnaire}}
"""

# (application, level, source, question, dialogue, value)
SMALL_ROWS = [
    ("A", "model_testing", "annotation", "harm", "d1", "yes"),
    ("A", "model_testing", "annotation", "harm", "d2", "no"),
    ("A", "model_testing", "annotation", "harm", "d3", "no"),
    ("A", "field_testing", "annotation", "harm", "d4", "yes"),
    ("A", "field_testing", "annotation", "harm", "d4", "yes"),
    ("A", "field_testing", "annotation", "harm", "d5", "no"),
    ("A", "model_testing", "annotation", "useful", "d1", "10"),
    ("A", "model_testing", "annotation", "useful", "d2", "4"),
    ("A", "field_testing", "questionnaire", "liked", "d4", "5"),
    ("A", "field_testing", "questionnaire", "liked", "d5", "2"),
    ("A", "field_testing", "questionnaire", "liked", "d6", "4"),
    ("B", "model_testing", "annotation", "harm", "d7", "no"),
    # Not declared by the tree: ignored, even though it is text.
    ("B", "red_teaming", "questionnaire", "rt_strategies", "d8", "asked twice"),
]

COLUMNS = ("application", "level", "source", "question", "dialogue_id", "value")


MakeLeaves = Callable[[Sequence[tuple[str, ...]]], LeafTable]


def _rows_to_table(rows: Sequence[tuple[str, ...]]) -> LeafTable:
    columns = COLUMNS if not rows or len(rows[0]) == len(COLUMNS) else (*COLUMNS, "scenario")
    return LeafTable.from_rows([dict(zip(columns, row, strict=True)) for row in rows])


@pytest.fixture
def make_leaves() -> MakeLeaves:
    """Rows of (application, level, source, question, dialogue_id, value[, scenario])."""
    return _rows_to_table


@pytest.fixture
def small_tree() -> TreeSpec:
    return parse_tree(SMALL_TREE, source="small.yaml")


@pytest.fixture
def small_leaves() -> LeafTable:
    return _rows_to_table(SMALL_ROWS)


@pytest.fixture
def small_tree_path(tmp_path: Path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL_TREE, encoding="utf-8")
    return path


@pytest.fixture
def small_csv_path(tmp_path: Path) -> Path:
    path = tmp_path / "leaves.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(SMALL_ROWS)
    return path
