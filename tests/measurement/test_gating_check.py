"""A tree is checked against the labels: undeclared gated questions are warned about."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from corix.cli.main import app
from corix.measurement import LeafTable
from corix.measurement.trees.gating_check import undeclared_gating
from corix.measurement.trees.loading import parse_tree

TREE = """
name: user_tree
questions:
  violation: {kind: yes_no, yes_means: risk}
  consistent: {kind: yes_no, yes_means: safe, gated: GATED}
nodes:
  root: {summarizer: mean, children: [{question: violation}]}
"""


def _rows(n: int, violations: int) -> list[dict[str, str]]:
    """``n`` dialogues; ``consistent`` is asked only of the ``violations`` with a yes."""
    rows = []
    for i in range(n):
        common = {"application": "app", "level": "model_testing", "source": "annotation"}
        yes = i < violations
        rows.append(
            {
                **common,
                "question": "violation",
                "dialogue_id": f"d{i}",
                "value": "yes" if yes else "no",
            }
        )
        if yes:
            rows.append({**common, "question": "consistent", "dialogue_id": f"d{i}", "value": "no"})
    return rows


def _tree(gated: bool) -> str:
    return TREE.replace("GATED", "true" if gated else "false").replace(
        "[{question: violation}]",
        "[{question: violation}, {question: consistent}]"
        if not gated
        else "[{question: violation}]",
    )


def test_a_question_only_answered_after_a_yes_is_warned_about() -> None:
    leaves = LeafTable.from_rows(_rows(360, 1))
    found = undeclared_gating(parse_tree(_tree(gated=False)), leaves)
    assert [(f.question, f.gate, f.answered, f.gate_no) for f in found] == [
        ("consistent", "violation", 1, 359)
    ]
    assert f"(node {found[0].nodes[0]})" in found[0].message and found[0].nodes
    assert "gated: true" in found[0].message
    assert undeclared_gating(parse_tree(_tree(gated=True)), leaves) == []


def test_no_warning_on_too_little_evidence_or_a_question_asked_of_all() -> None:
    few = LeafTable.from_rows(_rows(8, 1))  # 7 "no" dialogues could be chance
    assert undeclared_gating(parse_tree(_tree(gated=False)), few) == []
    rows = _rows(40, 5)
    rows.append(
        {
            **{k: rows[-1][k] for k in ("application", "level", "source")},
            "question": "consistent",
            "dialogue_id": "d39",
            "value": "yes",
        }
    )
    asked_of_a_no = LeafTable.from_rows(rows)
    assert undeclared_gating(parse_tree(_tree(gated=False)), asked_of_a_no) == []


def test_tree_score_prints_the_warning(tmp_path: Path) -> None:
    tree = tmp_path / "tree.yaml"
    tree.write_text(_tree(gated=False))
    leaves = tmp_path / "leaves.csv"
    rows = _rows(60, 2)
    header = ["application", "level", "source", "question", "dialogue_id", "value"]
    leaves.write_text(
        "\n".join([",".join(header), *(",".join(r[c] for c in header) for r in rows)])
    )
    result = CliRunner().invoke(
        app, ["tree", "score", "--tree", str(tree), "--leaves", str(leaves)]
    )
    assert result.exit_code == 0, result.output
    assert "warning: question 'consistent'" in result.output
