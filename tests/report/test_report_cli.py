"""`corix tree …` and `corix report`, invoked as a user invokes them."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from corix.cli.report_cmds import report_command, tree_app
from corix.errors import UnknownNameError
from corix.measurement import load_tree, score_tree
from corix.measurement.core import stored_leaves
from corix.measurement.trees.leaves import LeafError
from corix.storage import Database
from support.run_builder import write_tiny_run

runner = CliRunner()

TREE = """\
name: cli_small
scale: {min: 0, max: 10}
questions:
  harm: {kind: yes_no, yes_means: risk}
  liked: {kind: likert, min: 1, max: 5, higher_is: better}
nodes:
  root: {summarizer: aggregation, children: [risk, liking]}
  risk:
    summarizer: mean
    children:
      - question: harm
  liking: {question: liked, where: {source: questionnaire}}
"""
LEAVES = [
    ("application", "level", "source", "question", "dialogue_id", "value"),
    ("A", "model_testing", "annotation", "harm", "d1", "yes"),
    ("A", "model_testing", "annotation", "harm", "d2", "no"),
    ("A", "field_testing", "questionnaire", "liked", "d3", "5"),
    ("B", "model_testing", "annotation", "harm", "d4", "yes"),
]


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("report")(report_command)
    app.add_typer(tree_app, name="tree")
    return app


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    tree = tmp_path / "tree.yaml"
    tree.write_text(TREE, encoding="utf-8")
    leaves = tmp_path / "leaves.csv"
    with leaves.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(LEAVES)
    return tree, leaves


def test_tree_score_json_contract(files: tuple[Path, Path]) -> None:
    tree, leaves = files
    result = runner.invoke(
        _app(), ["tree", "score", "--tree", str(tree), "--leaves", str(leaves), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data["applications"]) == {"A", "B"}
    a = data["applications"]["A"]
    assert {"id", "summarizer", "value", "n", "children"} <= a.keys()
    assert a["summarizer"] == "aggregation"
    risk, liking = a["children"]
    # A: harm yes, no → mean of 10 and 0; liked 5 of 1–5, higher is better → 0 risk.
    assert (risk["id"], risk["value"], risk["n"]) == ("risk", 5.0, 2)
    assert (liking["id"], liking["value"], liking["n"]) == ("liking", 0.0, 1)
    assert a["value"] == [5.0, 0.0]
    b_liking = data["applications"]["B"]["children"][1]
    # No answer: empty, never 0.
    assert b_liking["value"] is None and b_liking["n"] == 0 and b_liking["empty"] is True
    assert data["bootstrap"] is None


def test_tree_score_with_bootstrap_gives_intervals(files: tuple[Path, Path]) -> None:
    tree, leaves = files
    args = ["tree", "score", "--tree", str(tree), "--leaves", str(leaves), "--json"]
    result = runner.invoke(_app(), [*args, "--bootstrap", "200", "--seed", "3"])
    data = json.loads(result.stdout)
    risk = data["applications"]["A"]["children"][0]
    # Resampling A's two harm dialogues (yes, no) gives means 0, 5 or 10.
    assert risk["ci_low"] == 0.0 and risk["ci_high"] == 10.0
    assert data["bootstrap"] == {"replicates": 200, "seed": 3, "confidence": 0.95}
    again = json.loads(runner.invoke(_app(), [*args, "--bootstrap", "200", "--seed", "3"]).stdout)
    assert again == data


def test_tree_score_text_marks_empty_nodes(files: tuple[Path, Path]) -> None:
    tree, leaves = files
    result = runner.invoke(_app(), ["tree", "score", "--tree", str(tree), "--leaves", str(leaves)])
    assert result.exit_code == 0
    assert "liking" in result.stdout and "empty" in result.stdout
    assert "5.00" in result.stdout


def test_tree_show_lists_the_expanded_nodes() -> None:
    result = runner.invoke(_app(), ["tree", "show", "aria_pilot"])
    assert result.exit_code == 0
    assert "privacy_labels@red_teaming" in result.stdout.replace("\n", "")
    unknown = runner.invoke(_app(), ["tree", "show", "aria_pilott"])
    assert isinstance(unknown.exception, UnknownNameError)
    assert "aria_pilot" in str(unknown.exception)


def test_tree_show_prints_what_each_node_filters() -> None:
    output = runner.invoke(_app(), ["tree", "show", "ai_rmf"]).stdout
    text = re.sub(r" *\n[ │]*", " ", output)  # undo the terminal's wrapping
    assert "meal_planner_violations mean · where source=annotation, scenario=meal_planner" in text
    assert "red_team_resistance mean · where level=red_teaming" in text
    assert "safe weighted_mean ├──" in text  # nothing narrowed: no "where"


def test_leaves_without_a_filtered_column_are_refused(tmp_path: Path) -> None:
    leaves = tmp_path / "no_scenario.csv"
    leaves.write_text(
        "application,level,source,question,dialogue_id,value\n"
        "A,model_testing,annotation,ra_prohibited_released,d1,yes\n",
        encoding="utf-8",
    )
    result = runner.invoke(
        _app(), ["tree", "score", "--tree", "aria_pilot", "--leaves", str(leaves)]
    )
    assert isinstance(result.exception, LeafError)
    message = str(result.exception)
    assert f"{leaves}: no 'scenario' column, but tree 'aria_pilot' filters on it" in message
    assert "(node(s) validity_reliability, safety, privacy)" in message


async def test_exported_leaves_score_like_the_stored_record(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await write_tiny_run(sqlite_db)
    out = tmp_path / "leaves.csv"
    exported = runner.invoke(
        _app(), ["tree", "leaves", run_id, "-o", str(out), "--db", sqlite_db.url]
    )
    assert exported.exit_code == 0, exported.output
    assert out.read_text().splitlines()[0].endswith(",dialogue_key,tester")
    scored = runner.invoke(
        _app(), ["tree", "score", "--tree", "aria_pilot", "--leaves", str(out), "--json"]
    )
    data = json.loads(scored.stdout)
    direct = score_tree(load_tree("aria_pilot"), stored_leaves(sqlite_db, run_id))
    for application, root in direct.items():
        assert data["applications"][application] == root.document().model_dump(mode="json")


async def test_report_command_writes_three_files(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await write_tiny_run(sqlite_db)
    out = tmp_path / "report"
    result = runner.invoke(
        _app(),
        [
            "report",
            run_id,
            "--out",
            str(out),
            "--tree",
            "ai_rmf",
            "--bootstrap",
            "20",
            "--db",
            sqlite_db.url,
        ],
    )
    assert result.exit_code == 0, result.output
    assert {p.name for p in out.iterdir()} == {"report.html", "report.md", "report.json"}
    assert "report.html" in result.stdout
    document = json.loads((out / "report.json").read_text(encoding="utf-8"))
    # One tree per annotator source, side by side.
    assert list(document["trees"]) == ["ai_rmf-human", "ai_rmf-llm", "ai_rmf-reference"]
    assert document["settings"]["bootstrap"] == 20


def test_tree_score_says_when_annotator_kinds_share_nodes(tmp_path: Path) -> None:
    leaves = tmp_path / "kinds.csv"
    leaves.write_text(
        "application,level,source,question,dialogue_id,value,annotator\n"
        "A,model_testing,annotation,harm,d1,yes,human:h1\n"
        "A,model_testing,annotation,harm,d1,no,llm:judge\n",
        encoding="utf-8",
    )
    tree = tmp_path / "t.yaml"
    tree.write_text(TREE, encoding="utf-8")
    args = ["tree", "score", "--tree", str(tree), "--leaves", str(leaves)]
    pooled = runner.invoke(_app(), args)
    assert "labels of human, llm annotators share each node" in pooled.stdout
    data = json.loads(runner.invoke(_app(), [*args, "--json"]).stdout)
    assert data["pooled_annotator_kinds"] == ["human", "llm"]
    apart = json.loads(runner.invoke(_app(), [*args, "--json", "--per-annotator-kind"]).stdout)
    risk = {
        kind: trees["A"]["children"][0]["value"] for kind, trees in apart["annotator_kinds"].items()
    }
    assert risk == {"human": 10.0, "llm": 0.0}
