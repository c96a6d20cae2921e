"""`corix export --format csv`: flat tables a pipeline reads back, labels with their spec."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from report_support import HOSTILE_REPLY, write_tiny_run
from typer.testing import CliRunner

from corix.cli.main import app
from corix.storage import Database

runner = CliRunner()


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


async def test_every_table_is_written_and_reads_back(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await write_tiny_run(sqlite_db)
    out = tmp_path / "tables"
    result = runner.invoke(
        app, ["export", run_id, "--format", "csv", "--output", str(out), "--db", sqlite_db.url]
    )
    assert result.exit_code == 0, result.output
    sessions = _rows(out / "sessions.csv")
    assert sorted(s["session_id"] for s in sessions) == ["s1", "s2", "s3", "s4"]
    turns = _rows(out / "turns.csv")
    assert len(turns) == 5
    assert HOSTILE_REPLY in {t["response_text"] for t in turns}  # any text survives CSV
    assert len(_rows(out / "questionnaire.csv")) == 5
    passes = _rows(out / "passes.csv")
    assert {p["annotator_kind"] for p in passes} == {"reference", "llm", "human"}
    assert all(p["guideline_version"] for p in passes)
    assert "failed" in {p["status"] for p in passes}
    labels = _rows(out / "settled_labels.csv")
    spec = json.loads((out / "measurement.json").read_text(encoding="utf-8"))
    assert {label["measurement"] for label in labels} == {spec["digest"]}
    assert {label["settling"] for label in labels} == {"conservative"}
    person = [
        label
        for label in labels
        if label["annotator"] == "human:ann1" and label["question_id"] == "ra_prohibited_released"
    ]
    # The person's two passes tie; one settled label, the tie recorded.
    assert [(p["value"], p["n_values"], p["tie"]) for p in person] == [("yes", "2", "True")]


def test_csv_needs_a_folder(sqlite_db: Database) -> None:
    result = runner.invoke(app, ["export", "run-x", "--format", "csv", "--db", sqlite_db.url])
    assert result.exit_code == 2
