"""The spine's commands, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from corix.cli.main import app
from corix.report.document import ReportDocument

# One worker builds the module's shared fixture once, instead of each worker building it.
pytestmark = pytest.mark.xdist_group("test_cli_spine")

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def corix(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "corix.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `corix demo` run shared by the read-only command tests."""
    workdir = tmp_path_factory.mktemp("demo")
    result = corix("demo", cwd=workdir)
    assert result.returncode == 0, result.stderr
    return workdir


def _run_id(workdir: Path) -> str:
    result = corix("runs", "list", "--json", cwd=workdir)
    runs = json.loads(result.stdout)
    return str(runs[-1]["id"])


def test_demo_stores_sessions_and_writes_a_report(demo_dir: Path) -> None:
    runs = json.loads(corix("runs", "list", "--json", cwd=demo_dir).stdout)
    assert [r["status"] for r in runs] == ["complete"]
    assert runs[0]["summary"]["sessions"] > 0
    reports = list((demo_dir / ".corix" / "reports").rglob("*.html"))
    assert reports, "the demo writes an HTML report"


def test_the_demo_shows_where_simulation_stands_in_and_where_not(demo_dir: Path) -> None:
    (report,) = (demo_dir / ".corix" / "reports").rglob("report.json")
    gap = json.loads(report.read_text())["simulation_gap"]
    verdicts = {" · ".join(cell["cell"].values()): cell["stands_in"] for cell in gap["cells"]}
    assert verdicts == {
        "assistant-guarded · meal_planner · field_testing": True,
        "assistant-guarded · pathfinder · red_teaming": False,
    }


def test_export_writes_one_line_per_session(demo_dir: Path) -> None:
    run_id = _run_id(demo_dir)
    lines = corix("export", run_id, cwd=demo_dir).stdout.splitlines()
    shown = json.loads(corix("runs", "show", run_id, "--json", cwd=demo_dir).stdout)
    assert len(lines) == shown["sessions"]
    session = json.loads(lines[0])
    assert session["provenance"]["application"] == session["application"]
    assert session["turns"][0]["user_text"]


def test_sessions_show_prints_a_transcript(demo_dir: Path) -> None:
    run_id = _run_id(demo_dir)
    first = json.loads(corix("export", run_id, cwd=demo_dir).stdout.splitlines()[0])
    text = corix("sessions", "show", first["id"], cwd=demo_dir).stdout
    assert f"session {first['id']}" in text
    assert first["turns"][0]["user_text"] in text


def test_unknown_run_is_a_clear_error(demo_dir: Path) -> None:
    result = corix("runs", "show", "run-nope", cwd=demo_dir)
    assert result.returncode == 2
    assert "no run 'run-nope'" in result.stderr
    assert "Traceback" not in result.stderr


def test_malformed_plan_runs_nothing(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("name: x\napplications: []\nscenarios: [tv_spoilers]\n", encoding="utf-8")
    result = corix("run", str(plan), cwd=tmp_path)
    assert result.returncode == 2
    assert f"{plan}:2, field 'applications': List should have at least 1 item" in result.stderr
    assert not (tmp_path / ".corix").exists()


def test_unknown_adapter_lists_known_ones(tmp_path: Path) -> None:
    result = corix("app", "check", "demoo:guarded", cwd=tmp_path)
    assert result.returncode == 2
    assert "Did you mean 'demo'?" in result.stderr
    assert "aria" in result.stderr


def test_app_check_prints_reply_and_timings() -> None:
    result = runner.invoke(app, ["app", "check", "demo:guarded", "--prompt", "Hi there"])
    assert result.exit_code == 0, result.output
    for step in ("open", "version", "start session", "respond", "end session", "close"):
        assert step in result.output
    assert "ok" in result.output


def test_app_check_shows_hostile_replies_harmlessly(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "corix.cli.main", "app", "check", "python:support.apps:HostileApp"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert result.returncode == 0, result.stderr
    reply = next(line for line in result.stdout.splitlines() if "respond" in line)
    # NUL, the lone surrogate and the escape character each shown as U+FFFD, nothing raw.
    assert reply.endswith("a NUL \ufffd, a lone \ufffd and a terminal escape \ufffd[2J end")
    assert "\x1b" not in result.stdout and "\x00" not in result.stdout


def test_packs_commands() -> None:
    listed = runner.invoke(app, ["packs", "list", "--json"])
    names = {p["name"] for p in json.loads(listed.output)}
    assert names == {"tv_spoilers", "meal_planner", "pathfinder"}
    shown = runner.invoke(app, ["packs", "show", "meal_planner"])
    assert "prohibited" in shown.output
    assert "model tests" in shown.output


def test_the_demos_report_json_validates_against_the_published_schema(demo_dir: Path) -> None:
    """The JSON Schema in docs/ describes the report.json corix writes, and the model reads
    that file back to the same document."""
    (written,) = (demo_dir / ".corix" / "reports").rglob("report.json")
    document = json.loads(written.read_text(encoding="utf-8"))
    schema = json.loads((REPO / "docs" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(document, schema, cls=jsonschema.Draft202012Validator)
    assert document["schema_version"] == 1 and document["defect_rates"]
    assert ReportDocument.model_validate(document).to_json() == document
    # A key the schema does not know is refused, not passed over.
    with pytest.raises(jsonschema.ValidationError, match="unexpected"):
        jsonschema.validate({**document, "unexpected": 1}, schema)
