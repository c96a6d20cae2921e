"""`corix plan size`: per-cell counts from the measurement core, and a plan written with them."""

from __future__ import annotations

import json
import math
from pathlib import Path

from typer.testing import CliRunner

from corix.cli.main import app
from corix.domain.plan import load_plan
from corix.measurement.stats.sample_size import n_for_assured_width, n_for_difference

runner = CliRunner()

PLAN = """\
name: sized
applications:
  - {name: a, spec: "demo:guarded"}
  - {name: b, spec: "demo:unguarded"}
scenarios: [tv_spoilers]
levels:
  red_teaming: {sessions: 4}
gates: {guardrail_violation: 0.2}
"""


def _plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(PLAN)
    return path


def test_plan_size_counts_width_power_and_design_effect(tmp_path: Path) -> None:
    args = ["plan", "size", str(_plan(tmp_path)), "--width", "0.2", "--difference", "0.2"]
    args += ["--rate", "0.3", "--icc", "0.1", "--per-tester", "5", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    cells = json.loads(result.output)["cells"]
    # Two applications × one scenario × one level × one harm (the gate's).
    assert [(c["application"], c["harm"]) for c in cells] == [
        ("a", "guardrail_violation"),
        ("b", "guardrail_violation"),
    ]
    cell = cells[0]
    assert cell["design_effect"] == 1.4
    assert cell["n_width"] == n_for_assured_width(0.3, 0.2, per_tester=5, icc=0.1)
    assert cell["width_promise"] == (
        "95% cluster interval over testers (5 dialogues each, ICC 0.100) width ≤ 0.2 "
        "in at least 80% of runs if the rate is 30.0%"
    )
    assert cell["n_power"] == math.ceil(n_for_difference(0.3, 0.2, comparisons=1) * 1.4)
    assert cell["n"] == max(cell["n_width"], cell["n_power"])


def test_plan_size_writes_the_counts_into_a_plan(tmp_path: Path) -> None:
    out = tmp_path / "sized.yaml"
    args = ["plan", "size", str(_plan(tmp_path)), "--width", "0.2", "--write", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "dialogues per cell" in result.output
    sized = load_plan(out)
    (settings,) = sized.levels.values()
    assert settings.sessions == n_for_assured_width(0.5, 0.2)  # worst-case rate, no clustering
    assert "Wilson width ≤ 0.2 in at least 80% of runs" in " ".join(result.output.split())
    assert sized.gates == {"guardrail_violation": 0.2}


def test_plan_size_needs_a_question(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", "size", str(_plan(tmp_path))])
    assert result.exit_code == 2
    assert "give --width, --difference or both" in result.output


def test_plan_size_write_keeps_the_plans_comments_and_key_order(tmp_path: Path) -> None:
    plan = tmp_path / "commented.yaml"
    plan.write_text(
        "# our spring plan\n"
        "name: sized   # shown in reports\n"
        "scenarios: [tv_spoilers]\n"
        "applications:\n"
        '  - {name: a, spec: "demo:guarded"}\n'
        "levels:\n"
        "  red_teaming: {sessions: 4, max_turns: 3}  # short dialogues\n"
        "gates: {guardrail_violation: 0.2}\n",
        encoding="utf-8",
    )
    out = tmp_path / "sized.yaml"
    args = ["plan", "size", str(plan), "--width", "0.2", "--write", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    n = n_for_assured_width(0.5, 0.2)
    # Everything as written but the count (ruamel puts one space before a comment that
    # follows a flow mapping).
    assert out.read_text(encoding="utf-8") == (
        "# our spring plan\n"
        "name: sized   # shown in reports\n"
        "scenarios: [tv_spoilers]\n"
        "applications:\n"
        '  - {name: a, spec: "demo:guarded"}\n'
        "levels:\n"
        f"  red_teaming: {{sessions: {n}, max_turns: 3}} # short dialogues\n"
        "gates: {guardrail_violation: 0.2}\n"
    )
