"""`corix export --format csv`: flat tables a pipeline reads back, labels with their spec."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.cli.main import app
from corix.report.export_parquet import ParquetTables
from corix.storage import Database, get_run
from support.run_builder import HOSTILE_REPLY, write_synthetic_run, write_tiny_run
from support.web_records import series_of

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


async def test_sessions_list_filters_by_group_and_violation(sqlite_db: Database) -> None:
    run_id = await write_tiny_run(sqlite_db)
    listed = runner.invoke(
        app, ["sessions", "list", run_id, "--db", sqlite_db.url, "--json", "--violation"]
    )
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.output)
    # s1: the reference and the LLM found a violation; s3: the LLM's and the person's ties.
    assert [row["id"] for row in rows] == ["s1", "s3"]
    beta = runner.invoke(
        app,
        ["sessions", "list", run_id, "--db", sqlite_db.url, "--json", "--application", "beta"],
    )
    assert {row["id"] for row in json.loads(beta.output)} == {"s3", "s4"}
    shown = runner.invoke(
        app, ["sessions", "list", run_id, "--settling", "majority", "--db", sqlite_db.url]
    )
    assert shown.exit_code == 0 and "repeats settled by majority" in shown.output


async def test_runs_show_prints_the_plan_as_yaml(sqlite_db: Database) -> None:
    run_id = await write_tiny_run(sqlite_db)
    shown = runner.invoke(app, ["runs", "show", run_id, "--db", sqlite_db.url])
    assert shown.exit_code == 0, shown.output
    assert "plan:\nname: t" in shown.output and "{'" not in shown.output


async def test_runs_compare_puts_two_runs_side_by_side(sqlite_db: Database) -> None:
    first = await write_synthetic_run(sqlite_db, run_id="run-a", sessions_per_cell=2)
    second = await write_synthetic_run(sqlite_db, run_id="run-b", sessions_per_cell=2)
    shown = runner.invoke(app, ["runs", "compare", first, second, "--db", sqlite_db.url, "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    rows = {row["what"]: row for row in data["rows"]}
    assert data["measurement"]["a"]["digest"] == data["measurement"]["b"]["digest"]
    rate = rows["reference · guardrail_violation · alpha"]
    # The same plan and seed twice: the same numbers, no change, overlapping intervals.
    assert rate["a"] == rate["b"] and rate["change"] == 0 and rate["intervals_overlap"]
    assert any(what.startswith("aria_pilot · reference · beta") for what in rows)
    settled = runner.invoke(
        app, ["runs", "compare", first, second, "--settling", "majority", "--db", sqlite_db.url]
    )
    assert settled.exit_code == 0, settled.output
    assert "repeats settled by majority" in settled.output
    assert f"{first}: " in settled.output and f"{second}: " in settled.output


async def test_parquet_tables_hold_the_same_rows(sqlite_db: Database, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    run_id = await write_tiny_run(sqlite_db)
    out = tmp_path / "tables"
    result = runner.invoke(
        app, ["export", run_id, "--format", "parquet", "--output", str(out), "--db", sqlite_db.url]
    )
    assert result.exit_code == 0, result.output
    for name in ("sessions", "turns", "passes", "settled_labels"):
        table = pq.read_table(out / f"{name}.parquet")
        as_text = [
            {key: "" if value is None else str(value) for key, value in row.items()}
            for row in table.to_pylist()
        ]
        csv_rows = _rows(out / f"{name}.csv")
        assert len(as_text) == len(csv_rows), name
        assert [row["session_id"] for row in as_text] == [row["session_id"] for row in csv_rows]
    turns = pq.read_table(out / "turns.parquet").column("response_text").to_pylist()
    assert HOSTILE_REPLY in turns  # multi-line, hostile text survives the round trip


def test_parquet_tables_write_a_row_group_per_chunk_of_rows(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    with ParquetTables(tmp_path, {"t": ("a", "b"), "empty": ("c",)}, rows_per_group=2) as out:
        for n in range(5):
            out.write("t", {"a": n, "b": None if n % 2 else f"line\n{n}"})
    written = pq.ParquetFile(tmp_path / "t.parquet")
    assert written.metadata.num_row_groups == 3  # 2 + 2 + 1 rows
    assert written.read().to_pylist()[:2] == [{"a": "0", "b": "line\n0"}, {"a": "1", "b": None}]
    assert pq.read_table(tmp_path / "empty.parquet").num_rows == 0
    assert out.counts == {"t": 5, "empty": 0}


async def test_a_series_exports_every_run_and_loads_with_datasets(
    sqlite_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await write_synthetic_run(sqlite_db, run_id="run-a", sessions_per_cell=1)
    second = await write_synthetic_run(sqlite_db, run_id="run-b", sessions_per_cell=1)
    series_of(sqlite_db, "pilot", [get_run(sqlite_db, run).name for run in (first, second)])
    out = tmp_path / "hf"
    result = runner.invoke(
        app,
        [
            "export",
            "--series",
            "pilot",
            "--format",
            "hf",
            "--output",
            str(out),
            "--db",
            sqlite_db.url,
        ],
    )
    assert result.exit_code == 0, result.output
    import pyarrow.parquet as pq

    assert not list(out.glob("*.csv"))  # typed Parquet only: nothing for a spreadsheet
    sessions = pq.read_table(out / "sessions.parquet").to_pylist()
    assert {s["run_id"] for s in sessions} == {first, second}
    datasets = pytest.importorskip("datasets", reason="Hugging Face datasets not installed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    cache = str(tmp_path / "hf-cache")  # datasets reads HF_DATASETS_CACHE once, on import
    loaded = datasets.load_dataset(str(out), "sessions", split="train", cache_dir=cache)
    assert sorted(loaded["session_id"]) == sorted(s["session_id"] for s in sessions)
    turns = datasets.load_dataset(str(out), "turns", split="train", cache_dir=cache)
    assert turns.num_rows == pq.read_table(out / "turns.parquet").num_rows
    unknown = runner.invoke(
        app,
        ["export", "--series", "nope", "--format", "csv", "-o", str(out), "--db", sqlite_db.url],
    )
    assert unknown.exit_code == 2
