"""The report's section on simulated against human testers: the core's figures, formatted."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from corix.cli.main import app
from corix.measurement import measure, simulation_gap_per_cell
from corix.report import ReportSettings, write_report_with
from corix.storage import Database
from support.run_builder import write_tiny_run
from support.testers_run import write_mixed_testers_run
from support.web_records import series_of

runner = CliRunner()
SETTINGS = ReportSettings(trees=("aria_pilot",), bootstrap=0, simulation_delta=0.2)


async def test_each_cell_says_whether_simulation_stands_in(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await write_mixed_testers_run(sqlite_db)
    paths = write_report_with(sqlite_db, run_id, tmp_path / "run", SETTINGS)
    document = json.loads(paths.json.read_text())
    measurement = measure(sqlite_db, [run_id], SETTINGS.measurement_spec())
    expected = simulation_gap_per_cell(sqlite_db, measurement, delta=0.2)
    assert document["simulation_gap"] == expected.model_dump(mode="json")
    markdown = " ".join(paths.markdown.read_text().split())
    assert "## Simulated against human testers" in markdown
    # alpha · tv spoilers · red teaming: guardrail violations 50% (people) against 25%.
    assert "alpha · tv spoilers · red teaming: simulation does not stand in" in markdown
    assert "-25.0 pts" in markdown and "within ±δ (δ = 0.2)" in markdown
    assert "Calibrated simulation: the human testers' feature means lie outside" in markdown
    html = paths.html.read_text()
    assert 'id="simulation-gap"' in html and 'href="#simulation-gap"' in html
    assert "simulation does not stand in" in html


async def test_a_series_report_has_the_section_too(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await write_mixed_testers_run(sqlite_db)
    series_of(sqlite_db, "pilot", ["test " + run_id])
    paths = write_report_with(sqlite_db, run_id, tmp_path / "series", SETTINGS, series="pilot")
    assert "## Simulated against human testers" in paths.markdown.read_text()


async def test_without_both_kinds_there_is_no_section(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await write_tiny_run(sqlite_db)
    paths = write_report_with(sqlite_db, run_id, tmp_path / "tiny", SETTINGS)
    assert json.loads(paths.json.read_text())["simulation_gap"] is None
    assert "Simulated against human testers" not in paths.markdown.read_text()
    assert 'id="simulation-gap"' not in paths.html.read_text()


async def test_report_takes_delta_and_its_settings_keep_it(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await write_mixed_testers_run(sqlite_db)
    common = ["--tree", "aria_pilot", "--bootstrap", "0", "--db", sqlite_db.url]
    first = runner.invoke(
        app, ["report", run_id, "--delta", "0.95", "--out", str(tmp_path / "a"), *common]
    )
    assert first.exit_code == 0, first.output
    document = json.loads((tmp_path / "a" / "report.json").read_text())
    assert document["simulation_gap"]["cells"][0]["stands_in"] is True
    digest = document["settings"]["digest"]
    again = runner.invoke(
        app,
        [
            "report",
            run_id,
            "--settings-of",
            digest,
            "--out",
            str(tmp_path / "b"),
            "--db",
            sqlite_db.url,
        ],
    )
    assert again.exit_code == 0, again.output
    reused = json.loads((tmp_path / "b" / "report.json").read_text())
    assert reused["simulation_gap"]["delta"] == 0.95
    assert reused["settings"]["digest"] == digest
