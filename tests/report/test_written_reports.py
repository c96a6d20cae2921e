"""A written report stores its settings with every run it covers, and states them itself."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from alembic import command
from sqlalchemy import inspect
from typer.testing import CliRunner

import corix.measurement
from corix.cli.report_cmds import report_command
from corix.cli.runs_cmds import runs_app
from corix.domain import ReportOutput, ReportTree, WrittenReportSettings
from corix.errors import CorixError
from corix.measurement.spec import MeasurementSpec, ResolvedSpec
from corix.report import write_report
from corix.storage import Database, get_run, record_written_report, written_reports
from corix.storage.database import alembic_config
from support.run_builder import write_synthetic_run, write_tiny_run
from support.web_records import series_of

SHIPPED_TREES = Path(corix.measurement.__file__).parent / "trees"
runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("report")(report_command)
    app.add_typer(runs_app, name="runs")
    return app


async def _small_run(db: Database, run_id: str) -> str:
    """A labelled run whose session ids are its own, so several share one database."""
    return await write_synthetic_run(
        db, run_id=run_id, applications=("alpha", "beta"), sessions_per_cell=1
    )


def _settings(runs: tuple[str, ...], **changes: Any) -> WrittenReportSettings:
    fields: dict[str, Any] = {
        "runs": runs,
        "trees": (ReportTree(tree="aria_pilot", sha256="ab" * 32),),
        "bootstrap": 200,
        "seed": 9,
        "confidence": 0.9,
        "transcripts_per_group": 3,
        "view_gap": 2.0,
        "compared_runs": (),
        "measurement": {"spec": {"settling": "median"}},
        "measurement_digest": "0123456789ab",
        "corix_version": "1.2.3",
        "written_at": datetime(2026, 5, 4, 3, 2, 1, tzinfo=UTC),
        "outputs": (ReportOutput(format="json", path="/reports/r/report.json"),),
    }
    return WrittenReportSettings.model_validate(fields | changes)


async def test_the_stored_settings_read_back_with_every_run_they_cover(
    any_db: Database,
) -> None:
    first = await _small_run(any_db, "run-one")
    second = await _small_run(any_db, "run-two")
    settings = _settings((first, second), series="pilot", compare_runs=("run-zero",))
    report_id = record_written_report(any_db, settings)
    stored = written_reports(any_db, [first, second])
    assert [(r.run_id, r.report_id) for r in stored] == [(first, report_id), (second, report_id)]
    assert all(r.settings == settings and r.digest == settings.digest for r in stored)
    assert [r.run_id for r in written_reports(any_db, [second])] == [second]


def test_the_digest_follows_what_decides_the_content_not_when_or_where() -> None:
    settings = _settings(("run-a",))
    elsewhere = _settings(
        ("run-a",),
        written_at=datetime(2027, 1, 1, tzinfo=UTC),
        outputs=(ReportOutput(format="html", path="/elsewhere/report.html"),),
    )
    assert elsewhere.digest == settings.digest
    assert _settings(("run-a",), seed=10).digest != settings.digest
    edited_tree = (ReportTree(tree="aria_pilot", sha256="cd" * 32),)
    assert _settings(("run-a",), trees=edited_tree).digest != settings.digest


async def test_a_report_stores_exactly_the_settings_it_was_written_with(
    any_db: Database, tmp_path: Path
) -> None:
    earlier = await _small_run(any_db, "run-a")
    run_id = await _small_run(any_db, "run-b")
    tree_file = tmp_path / "my_tree.yaml"
    shutil.copy(SHIPPED_TREES / "aria_pilot.yaml", tree_file)
    measurement = MeasurementSpec(settling="median", group_annotators_by="annotator")
    paths = write_report(
        any_db,
        run_id,
        tmp_path / "out",
        trees=(tree_file, "ai_rmf"),
        bootstrap=17,
        seed=5,
        confidence=0.8,
        transcripts_per_group=2,
        compare_runs=[earlier],
        measurement=measurement,
        measurement_source="spec.yaml",
    )
    (record,) = written_reports(any_db, [run_id])
    settings = record.settings
    assert settings.runs == (run_id,) and settings.series is None
    assert [(t.tree, t.sha256) for t in settings.trees] == [
        (str(tree_file), hashlib.sha256(tree_file.read_bytes()).hexdigest()),
        ("ai_rmf", hashlib.sha256((SHIPPED_TREES / "ai_rmf.yaml").read_bytes()).hexdigest()),
    ]
    assert (settings.bootstrap, settings.seed, settings.confidence) == (17, 5, 0.8)
    assert settings.transcripts_per_group == 2
    assert (settings.compare_runs, settings.compared_runs) == ((earlier,), (earlier,))
    in_force = ResolvedSpec.model_validate(settings.measurement)
    assert (in_force.spec.settling, in_force.spec.group_annotators_by) == ("median", "annotator")
    assert (in_force.spec.bootstrap, in_force.spec.seed, in_force.spec.trees[1]) == (
        17,
        5,
        "ai_rmf",
    )
    assert settings.measurement_source == "spec.yaml"
    assert settings.measurement_digest == in_force.digest
    assert [(o.format, o.path) for o in settings.outputs] == [
        ("html", str(paths.html.resolve())),
        ("markdown", str(paths.markdown.resolve())),
        ("json", str(paths.json.resolve())),
    ]
    assert settings.written_at.tzinfo is not None
    assert record.digest == settings.digest

    document = json.loads(paths.json.read_text(encoding="utf-8"))
    stated = document["settings"]
    assert (stated["digest"], stated["compared_runs"], stated["runs"]) == (
        record.digest,
        [earlier],
        [run_id],
    )
    assert stated["written_at"] == settings.written_at.isoformat()
    assert stated["outputs"][2] == {"format": "json", "path": str(paths.json.resolve())}
    assert document["measurement"]["digest"] == settings.measurement_digest
    line = f"Report settings {record.digest}, written {settings.written_at:%Y-%m-%d %H:%M:%S} UTC"
    for text in (paths.html.read_text(encoding="utf-8"), paths.markdown.read_text("utf-8")):
        assert line in text
        assert "17 bootstrap replicates, seed 5, 80% intervals" in text
        assert f"compared with {earlier} (as asked)" in text
        assert f"(sha256 {settings.trees[1].sha256[:12]})" in text


async def test_each_report_adds_a_record_and_an_edited_tree_changes_the_digest(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await write_tiny_run(sqlite_db)
    tree_file = tmp_path / "tree.yaml"
    shutil.copy(SHIPPED_TREES / "aria_pilot.yaml", tree_file)
    write_report(sqlite_db, run_id, tmp_path / "first", trees=(tree_file,), bootstrap=0)
    tree_file.write_text(tree_file.read_text(encoding="utf-8") + "\n# edited\n", "utf-8")
    write_report(sqlite_db, run_id, tmp_path / "second", trees=(tree_file,), bootstrap=0)
    first, second = written_reports(sqlite_db, [run_id])
    assert first.settings.trees[0].sha256 != second.settings.trees[0].sha256
    assert first.digest != second.digest and first.report_id != second.report_id
    assert first.settings.outputs[0].path.endswith("first/report.html")


async def test_a_report_that_cannot_be_written_stores_nothing(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await write_tiny_run(sqlite_db)
    with pytest.raises(CorixError, match="no evaluation series named 'nope'"):
        write_report(sqlite_db, "", tmp_path, series="nope")
    with pytest.raises(CorixError):
        write_report(sqlite_db, run_id, tmp_path, trees=(tmp_path / "missing.yaml",))
    assert written_reports(sqlite_db, [run_id]) == []


async def test_a_series_report_is_stored_with_every_run_of_the_series(
    sqlite_db: Database, tmp_path: Path
) -> None:
    runs = [await _small_run(sqlite_db, name) for name in ("run-m", "run-r")]
    other = await _small_run(sqlite_db, "run-outside")
    human = series_of(sqlite_db, "pilot", [get_run(sqlite_db, run).name for run in runs])
    in_series = [*runs, human]  # the series' run of human sessions is its newest
    paths = write_report(sqlite_db, "", tmp_path, bootstrap=0, series="pilot")
    stored = written_reports(sqlite_db, [*in_series, other])
    assert [r.run_id for r in stored] == in_series
    assert len({r.report_id for r in stored}) == 1
    assert stored[0].settings.series == "pilot" and stored[0].settings.runs == tuple(in_series)
    shown = f"; series pilot, runs run-m, run-r, {human}"
    assert shown in paths.html.read_text(encoding="utf-8")


async def test_the_report_command_stores_its_flags_and_runs_show_lists_the_report(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await write_tiny_run(sqlite_db)
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text("settling: majority\nannotators:\n  - kind: reference\n", "utf-8")
    out = tmp_path / "report"
    report_args = ["report", run_id, "--out", str(out), "--bootstrap", "12", "--seed", "3"]
    report_args += ["--transcripts", "4", "--spec", str(spec_file), "--db", sqlite_db.url]
    written = runner.invoke(_app(), report_args)
    assert written.exit_code == 0, written.output
    (record,) = written_reports(sqlite_db, [run_id])
    settings = record.settings
    assert (settings.bootstrap, settings.seed, settings.transcripts_per_group) == (12, 3, 4)
    assert [t.tree for t in settings.trees] == ["aria_pilot", "ai_rmf"]
    assert settings.measurement_source == str(spec_file)
    assert settings.measurement["spec"]["settling"] == "majority"
    assert settings.measurement["spec"]["annotators"] == [
        {"name": None, "kind": "reference", "guideline_version": None}
    ]

    shown = runner.invoke(_app(), ["runs", "show", run_id, "--db", sqlite_db.url])
    assert shown.exit_code == 0, shown.output
    assert f"report settings {record.digest}" in shown.output
    assert "12 bootstrap replicates, seed 3, 95% intervals" in shown.output
    assert f"measurement: {settings.measurement_digest} from {spec_file}" in shown.output
    assert str((out / "report.json").resolve()) in shown.output
    as_json = json.loads(
        runner.invoke(_app(), ["runs", "show", run_id, "--db", sqlite_db.url, "--json"]).output
    )
    (report,) = as_json["reports"]
    assert (report["digest"], report["report_id"], report["settings"]["seed"]) == (
        record.digest,
        record.report_id,
        3,
    )


async def test_runs_show_says_when_no_report_was_written(sqlite_db: Database) -> None:
    run_id = await write_tiny_run(sqlite_db)
    shown = runner.invoke(_app(), ["runs", "show", run_id, "--db", sqlite_db.url])
    assert shown.exit_code == 0, shown.output
    assert "reports: none" in shown.output


async def test_a_database_from_the_previous_version_migrates(
    any_db: Database, tmp_path: Path
) -> None:
    config = alembic_config(any_db.engine)
    # A run stored before reports kept their settings: stored at the head (the ORM writes
    # today's columns), then the schema taken back to the version before, run and all.
    run_id = await write_tiny_run(any_db)
    command.downgrade(config, "annotation_jobs")
    assert "written_reports" not in inspect(any_db.engine).get_table_names()
    command.upgrade(config, "head")
    assert "written_reports" in inspect(any_db.engine).get_table_names()
    assert written_reports(any_db, [run_id]) == []
    write_report(any_db, run_id, tmp_path, bootstrap=0, seed=8)
    (record,) = written_reports(any_db, [run_id])
    assert record.settings.seed == 8


async def test_a_report_written_again_with_the_settings_of_a_stored_one_matches_it(
    sqlite_db: Database, tmp_path: Path
) -> None:
    earlier = await _small_run(sqlite_db, "run-earlier")
    run_id = await _small_run(sqlite_db, "run-later")
    tree_file = tmp_path / "tree.yaml"
    shutil.copy(SHIPPED_TREES / "aria_pilot.yaml", tree_file)
    first_args = ["report", run_id, "--out", str(tmp_path / "first"), "--tree", str(tree_file)]
    first_args += ["--bootstrap", "15", "--seed", "6", "--settling", "majority"]
    first_args += ["--compare-runs", earlier, "--db", sqlite_db.url]
    assert runner.invoke(_app(), first_args).exit_code == 0
    write_report(sqlite_db, run_id, tmp_path / "default", bootstrap=0)
    first, default = written_reports(sqlite_db, [run_id])

    again = ["report", run_id, "--out", str(tmp_path / "again"), "--db", sqlite_db.url]
    latest = runner.invoke(_app(), [*again, "--settings-of", "latest"])
    assert latest.exit_code == 0, latest.output
    written = runner.invoke(_app(), [*again, "--settings-of", first.digest[:6]])
    assert written.exit_code == 0, written.output
    _, _, reused_latest, reused = written_reports(sqlite_db, [run_id])
    assert reused.digest == first.digest and reused_latest.digest == default.digest
    assert reused.settings.compared_runs == (earlier,)
    assert reused.settings.measurement == first.settings.measurement
    documents = [
        json.loads((tmp_path / folder / "report.json").read_text(encoding="utf-8"))
        for folder in ("first", "again")
    ]
    assert documents[0]["trees"] == documents[1]["trees"]


async def test_settings_of_refuses_other_settings_unknown_digests_and_edited_trees(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await write_tiny_run(sqlite_db)
    tree_file = tmp_path / "tree.yaml"
    shutil.copy(SHIPPED_TREES / "aria_pilot.yaml", tree_file)
    write_report(sqlite_db, run_id, tmp_path / "first", trees=(tree_file,), bootstrap=0)
    (record,) = written_reports(sqlite_db, [run_id])
    again = ["report", run_id, "--out", str(tmp_path / "again"), "--db", sqlite_db.url]

    mixed = runner.invoke(_app(), [*again, "--settings-of", "latest", "--seed", "0"])
    assert mixed.exit_code == 2
    assert "--settings-of takes every setting from a stored report: drop --seed" in mixed.output
    unknown = runner.invoke(_app(), [*again, "--settings-of", "ffffff"])
    assert isinstance(unknown.exception, CorixError)
    assert f"no report of run {run_id} has settings 'ffffff' (written: {record.digest})" in str(
        unknown.exception
    )
    tree_file.write_text(tree_file.read_text(encoding="utf-8") + "\n# edited\n", "utf-8")
    edited = runner.invoke(_app(), [*again, "--settings-of", "latest"])
    assert isinstance(edited.exception, CorixError)
    assert f"tree {tree_file} has changed since report {record.digest}" in str(edited.exception)
    assert len(written_reports(sqlite_db, [run_id])) == 1
