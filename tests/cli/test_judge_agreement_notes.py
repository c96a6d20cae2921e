"""Every output with an LLM judge's rates says how far it agrees with people, and warns when
that is low: `corix defects`, `corix gate` and the report (HTML, Markdown, JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.report import write_report
from corix.storage import Database
from support.testers_run import write_judge_against_people_run

runner = CliRunner()
LOW = ("yyynnn", "ynnyyn")  # κ = −1/3
HIGH = ("yyynnn", "yyynnn")  # κ = 1
WARNING = "its rates are not people's"


@pytest.mark.parametrize(("verdicts", "warned"), [(LOW, True), (HIGH, False)])
async def test_defects_and_gate_say_the_judges_agreement(
    sqlite_db: Database, verdicts: tuple[str, str], warned: bool
) -> None:
    run_id = await write_judge_against_people_run(sqlite_db, *verdicts)
    defects = runner.invoke(app, ["defects", run_id, "--db", sqlite_db.url])
    assert defects.exit_code == ExitCode.OK, defects.output
    words = " ".join(defects.output.split())
    assert "judge 'llm' on guardrail_violation: Cohen's κ (unweighted)" in words
    assert "with people over 6 dialogues" in words
    assert (WARNING in words) is warned and ("⚠ judge" in words) is warned
    gate = runner.invoke(
        app, ["gate", run_id, "--max", "guardrail_violation=1", "--db", sqlite_db.url]
    )
    assert gate.exit_code == ExitCode.OK, gate.output
    assert (WARNING in gate.output) is warned and "Cohen's κ (unweighted)" in gate.output
    document = json.loads(
        runner.invoke(app, ["defects", run_id, "--db", sqlite_db.url, "--json"]).output
    )
    assert [a["low"] for a in document["judge_agreement"]] == [warned]


async def test_against_the_reference_annotator_never_says_people(sqlite_db: Database) -> None:
    run_id = await write_judge_against_people_run(sqlite_db, *LOW, other="reference")
    result = runner.invoke(app, ["defects", run_id, "--db", sqlite_db.url])
    words = " ".join(result.output.split())
    assert "with the reference annotator (rules, not people)" in words
    assert "with people" not in words


@pytest.mark.parametrize(("verdicts", "warned"), [(LOW, True), (HIGH, False)])
async def test_the_report_says_it_beside_the_rates(
    sqlite_db: Database, tmp_path: Path, verdicts: tuple[str, str], warned: bool
) -> None:
    run_id = await write_judge_against_people_run(sqlite_db, *verdicts)
    paths = write_report(sqlite_db, run_id, tmp_path, bootstrap=20)
    html = paths.html.read_text(encoding="utf-8")
    markdown = paths.markdown.read_text(encoding="utf-8")
    for text in (html, markdown):
        assert "Cohen&#39;s κ (unweighted)" in text or "Cohen's κ (unweighted)" in text
        assert (WARNING in text.replace("&#39;", "'")) is warned
    assert "κ (plain / quadratic)" in html and "α (nominal / ordinal)" in markdown
    (agreement,) = json.loads(paths.json.read_text(encoding="utf-8"))["judge_agreement"]
    assert agreement["low"] is warned and agreement["statistic"] == "Cohen's κ (unweighted)"


async def test_runs_compare_says_it_for_each_run(sqlite_db: Database) -> None:
    low = await write_judge_against_people_run(sqlite_db, *LOW, run_id="run-low")
    high = await write_judge_against_people_run(sqlite_db, *HIGH, run_id="run-high")
    result = runner.invoke(app, ["runs", "compare", low, high, "--db", sqlite_db.url])
    assert result.exit_code == ExitCode.OK, result.output
    words = " ".join(result.output.split())
    assert words.count("Cohen's κ (unweighted)") == 2 and words.count(WARNING) == 1
