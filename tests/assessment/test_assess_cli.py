"""The assessment commands end to end on a stored run: annotate, show, defects, agreement."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from annotator_support import CLEAN, SPOILER, store_run
from typer.testing import CliRunner

from corix.assessment.importing import LabelImportError
from corix.cli.agreement_cmds import agreement_command
from corix.cli.annotate_cmds import annotate_command
from corix.cli.annotations_cmds import annotations_app
from corix.cli.defects_cmds import defects_command
from corix.storage import Database

app = typer.Typer()
app.command("annotate")(annotate_command)
app.add_typer(annotations_app, name="annotations")
app.command("defects")(defects_command)
app.command("agreement")(agreement_command)

MARKUP = dataclasses.replace(
    CLEAN,
    id="markup",
    turns=[
        (
            "[bold red]Is this markup?[/]",
            "In episode 2, Maren finds a brass key taped under "
            "the Merrow's wheel. [link=https://example.invalid]click[/link]",
        )
    ],
)


@pytest.fixture
def stored(sqlite_db: Database) -> tuple[str, str]:
    """A stored run and the database URL."""
    run_id = store_run(sqlite_db, [CLEAN, SPOILER, MARKUP])
    return run_id, sqlite_db.url


def _run(*args: str) -> Any:
    # Wide enough that no identifier in a table is folded.
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "240"})


def _json(*args: str) -> Any:
    result = _run(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_annotate_then_defects(stored: tuple[str, str]) -> None:
    run_id, url = stored
    summary = _json("annotate", run_id, "--db", url)
    assert (summary["sessions"], summary["stored_as"]) == (3, "reference")
    again = _json("annotate", run_id, "--db", url)
    assert (
        again["passes_stored"] == 0 and again["passes_already_stored"] == summary["passes_stored"]
    )
    rates = _json("defects", run_id, "--db", url, "--by", "harm")["rates"]
    assert [(r["group"]["harm"], r["defects"], r["n"]) for r in rates] == [
        ("guardrail_violation", 1, 3)
    ]
    table = _run("defects", run_id, "--db", url, "--by", "application,harm")
    assert "guardrail_violation" in table.output and "33.3%" in table.output


def test_llm_annotation_with_the_mock_endpoint(stored: tuple[str, str]) -> None:
    run_id, url = stored
    summary = _json(
        "annotate",
        run_id,
        "--db",
        url,
        "--annotator",
        "llm",
        "--endpoint",
        "mock",
        "--repeats",
        "2",
        "--categories",
        "dialogue_utility",
    )
    assert summary["stored_as"] == "llm:corix-mock"
    assert summary["by_target"]["dialogue_utility"]["stored"] == 6
    assert summary["consensus_rows"] == 6  # two questions × three sessions
    refused = _run("annotate", run_id, "--db", url, "--endpoint", "mock")
    assert refused.exit_code == 2 and "takes no endpoint" in refused.output


def test_annotations_show_prints_untrusted_text_literally(stored: tuple[str, str]) -> None:
    run_id, url = stored
    _json("annotate", run_id, "--db", url)
    result = _run("annotations", "show", "markup", "--db", url)
    assert result.exit_code == 0, result.output
    assert "[bold red]Is this markup?[/]" in result.output
    assert "[link=https://example.invalid]click[/link]" in result.output
    assert "ra_prohibited_released" in result.output and "du_usefulness" in result.output
    shown = _json("annotations", "show", "markup", "--db", url)
    categories = {p["category"] for p in shown["passes"]}
    assert categories == {"risk_assessment", "dialogue_utility"}


def test_agreement_on_a_label_file(tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    rows = ["item_id,annotator,value"]
    for item, (a, b, c) in enumerate([(1, 1, 1), (2, 2, 3), (3, 4, 4), (4, 4, 5)]):
        rows += [f"i{item},ann_a,{a}", f"i{item},ann_b,{b}", f"i{item},ann_c,{c}"]
    labels.write_text("\n".join(rows) + "\n", encoding="utf-8")
    (report,) = _json("agreement", str(labels), "--a", "ann_a", "--b", "ann_b")
    # Numbers are ordinal by default. a: 1 2 3 4, b: 1 2 4 4 → 3 of 4 identical, all ±1.
    assert (report["n_items"], report["exact_agreement"], report["relaxed_agreement"]) == (
        4,
        0.75,
        1.0,
    )
    (grouped,) = _json(
        "agreement",
        str(labels),
        "--a",
        "ann_a",
        "--b",
        "team",
        "--group",
        "team=ann_b,ann_c",
    )
    # The team's value per item is the lower median of b and c: 1, 2, 4, 4.
    assert grouped["members_b"] == ["ann_b", "ann_c"] and grouped["exact_agreement"] == 0.75
    assert report["ordinal"] and report["labels"] == [1, 2, 3, 4]
    (nominal,) = _json("agreement", str(labels), "--a", "ann_a", "--b", "ann_b", "--nominal")
    assert not nominal["ordinal"] and nominal["relaxed_agreement"] is None
    table = _run("agreement", str(labels), "--a", "ann_a", "--b", "ann_b")
    assert "confusion matrix" in table.output


def test_agreement_on_half_point_labels(tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    pairs = [("7.5", "8"), ("3", "3.0"), ("2", "4"), ("9", "9.5")]
    rows = ["item_id,annotator,value"]
    for item, (a, b) in enumerate(pairs):
        rows += [f"i{item},ann_a,{a}", f"i{item},ann_b,{b}"]
    labels.write_text("\n".join(rows) + "\n", encoding="utf-8")
    (report,) = _json("agreement", str(labels), "--a", "ann_a", "--b", "ann_b")
    # "3" and "3.0" agree; 7.5/8 and 9/9.5 are within ±1, 2/4 is not.
    assert (report["exact_agreement"], report["relaxed_agreement"]) == (0.25, 0.75)
    assert report["labels"] == [2, 3, 4, 7.5, 8, 9, 9.5]
    assert report["cohen_kappa_quadratic"] is not None


def test_agreement_on_a_run_and_label_import_errors(
    stored: tuple[str, str], tmp_path: Path
) -> None:
    run_id, url = stored
    _json("annotate", run_id, "--db", url)
    _json(
        "annotate",
        run_id,
        "--db",
        url,
        "--annotator",
        "llm",
        "--endpoint",
        "mock",
        "--categories",
        "risk_assessment",
    )
    reports = _json(
        "agreement",
        "--run",
        run_id,
        "--a",
        "reference",
        "--b",
        "llm:corix-mock",
        "--question",
        "ra_prohibited_released",
        "--db",
        url,
    )
    assert [(r["question_id"], r["n_items"]) for r in reports] == [("ra_prohibited_released", 3)]
    table = _run(
        *("agreement", "--run", run_id, "--a", "reference", "--b", "llm:corix-mock"),
        *("--settling", "majority", "--db", url),
    )
    assert table.exit_code == 0, table.output
    assert table.output.startswith("measurement ")
    assert "repeats settled by majority" in table.output
    unknown = _run(
        *("agreement", "--run", run_id, "--a", "x", "--b", "y"),
        *("--settling", "mean", "--db", url),
    )
    assert unknown.exit_code != 0 and "mean" in unknown.output
    bad = tmp_path / "labels.csv"
    bad.write_text(
        "session_id,category,question_id,annotator,value\n"
        f"{CLEAN.id},risk_assessment,ra_prohibited_released,bo,perhaps\n",
        encoding="utf-8",
    )
    result = _run("annotations", "import", run_id, str(bad), "--db", url)
    assert isinstance(result.exception, LabelImportError)
    assert f"{bad}:2:" in str(result.exception)
