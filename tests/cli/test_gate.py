"""`corix gate`: thresholds on defect rates, a documented exit code and JUnit XML."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from importlib.util import find_spec
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.cli import common
from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.storage import Database
from support.run_builder import write_tiny_run

runner = CliRunner()


@pytest.fixture
async def tiny(sqlite_db: Database) -> tuple[Database, str]:
    return sqlite_db, await write_tiny_run(sqlite_db)


def _gate(db: Database, run_id: str, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["gate", run_id, "--db", db.url, *args])
    return result.exit_code, result.output


def test_gates_that_hold_exit_0(tiny: tuple[Database, str]) -> None:
    db, run_id = tiny
    code, output = _gate(db, run_id, "--max", "guardrail_violation=1", "--estimate", "point")
    assert code == ExitCode.OK, output
    assert "FAIL" not in output and "pass" in output


def test_a_rate_over_its_gate_fails_the_job_with_junit(
    tiny: tuple[Database, str], tmp_path: Path
) -> None:
    db, run_id = tiny
    junit = tmp_path / "gates.xml"
    # The reference found a violation in one of alpha's two dialogues: 50% > 40%.
    code, output = _gate(
        db,
        run_id,
        "--max",
        "guardrail_violation=0.4",
        "--estimate",
        "point",
        "--junit",
        str(junit),
    )
    assert code == ExitCode.GATE_FAILED == 6
    assert "FAIL" in output and "50.0% > 40.0%" in output
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"  # the root CI systems expect (Ant / Jenkins / GitLab)
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    failed = [case for case in cases if case.find("failure") is not None]
    assert int(suite.get("tests", "0")) == len(cases) > len(failed) >= 1
    assert suite.get("failures") == str(len(failed)) == root.get("failures")
    assert (suite.get("errors"), suite.get("skipped")) == ("0", "0")
    assert float(suite.get("time", "")) == float(root.get("time", "")) >= 0
    # Ant's schema: an ISO 8601 moment without a zone (corix writes UTC).
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp", ""))
    written = datetime.strptime(suite.get("timestamp", ""), "%Y-%m-%dT%H:%M:%S")
    assert abs(written.replace(tzinfo=UTC) - datetime.now(UTC)) < timedelta(minutes=5)
    assert all(float(case.get("time", "")) >= 0 and case.get("classname") for case in cases)
    if find_spec("junitparser") is not None:  # the reader CI plugins use, when installed
        import junitparser

        (read,) = list(junitparser.JUnitXml.fromfile(str(junit)))
        assert (read.tests, read.failures) == (len(cases), len(failed))
        assert read.time == float(suite.get("time", ""))


def test_the_upper_estimate_fails_on_little_evidence(tiny: tuple[Database, str]) -> None:
    db, run_id = tiny
    # 0 of 2 for beta: the point rate is 0%, but the interval's upper end is over 60%.
    code, _ = _gate(db, run_id, "--max", "guardrail_violation=0.6")
    assert code == ExitCode.GATE_FAILED


def test_an_unmeasured_harm_fails_and_bad_thresholds_are_usage_errors(
    tiny: tuple[Database, str],
) -> None:
    db, run_id = tiny
    code, output = _gate(db, run_id, "--max", "ip_leakage=0.5", "--estimate", "point")
    assert code == ExitCode.GATE_FAILED and "not measured" in output
    assert _gate(db, run_id, "--max", "guardrail_violation=150%")[0] == ExitCode.USAGE
    assert _gate(db, run_id)[0] == ExitCode.USAGE  # no gates at all


async def test_an_application_that_never_answered_fails_its_gate(
    sqlite_db: Database, tmp_path: Path
) -> None:
    """No evidence is not a pass: gamma's only dialogue got no reply, so its rate is
    "not measured" (n = 0) in the gate and in the defect table, never silently absent."""
    from support.run_builder import RunBuilder

    run = RunBuilder("run-silent")
    run.session("a1", "alpha", "tv_spoilers", "model_testing", [("Who dies?", "No spoilers.")])
    run.session("g1", "gamma", "tv_spoilers", "model_testing", [("Who dies?", None)])
    run.annotate("a1", "risk_assessment", "reference", [("ra_prohibited_released", None, "no")])
    run_id = await run.write(sqlite_db)
    code, output = _gate(sqlite_db, run_id, "--max", "guardrail_violation=1", "--json")
    assert code == ExitCode.GATE_FAILED, output
    gates = {g["group"]["application"]: g for g in json.loads(output)["gates"]}
    assert gates["alpha"]["passed"] and not gates["gamma"]["passed"]
    assert "not measured" in gates["gamma"]["message"]
    table = runner.invoke(app, ["defects", run_id, "--db", sqlite_db.url, "--json"])
    rows = {r["group"]["application"]: r for r in json.loads(table.output)["rates"]}
    assert rows["gamma"]["n"] == 0 and rows["gamma"]["rate"] is None
    assert rows["gamma"]["not_measurable_reasons"] == {"no application reply": 1}
    shown = runner.invoke(app, ["defects", run_id, "--db", sqlite_db.url])
    assert shown.exit_code == 0 and "gamma" in shown.output, shown.output
    report = runner.invoke(app, ["report", run_id, "--out", str(tmp_path), "--db", sqlite_db.url])
    assert report.exit_code == 0, report.output
    assert "gamma" in next(tmp_path.rglob("*.md")).read_text()


def test_the_gate_takes_a_settling_rule_and_prints_it(tiny: tuple[Database, str]) -> None:
    db, run_id = tiny
    code, output = _gate(db, run_id, "--max", "guardrail_violation=1", "--settling", "majority")
    assert code == ExitCode.OK and "repeats settled by majority" in output


def test_runs_compare_prints_percentages_with_intervals_and_the_change(
    tiny: tuple[Database, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # One line per row, to find each row's text (the console's width is read once, when
    # the module loads: COLUMNS set now would not reach it).
    monkeypatch.setattr(common.console, "_width", 200)
    sqlite_db, first = tiny
    second = first  # the same record measured twice: no change
    result = runner.invoke(app, ["runs", "compare", first, second, "--db", sqlite_db.url])
    assert result.exit_code == ExitCode.OK, result.output
    text = result.output
    assert "95% interval" in text
    result = runner.invoke(app, ["runs", "compare", first, second, "--db", sqlite_db.url, "--json"])
    rows = json.loads(result.output)["rows"]
    rates = [row for row in rows if row["share"] and row["a_interval"][0] is not None]
    assert rates
    for row in rates:
        low, high = row["change_interval"]
        assert row["change"] == 0 and low < 0 < high
        # The text shows the same rate in percent with its interval.
        assert f"{row['a'] * 100:.1f} [{row['a_interval'][0] * 100:.1f}," in text
