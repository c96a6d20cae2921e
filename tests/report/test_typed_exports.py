"""Typed exports: Parquet and `hf` carry numbers as numbers, missing values as null and
moments in UTC with their zone, read by the real readers (pyarrow, pandas, `datasets`);
formula escaping is for spreadsheet CSV only; a tool-using turn keeps its steps."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from corix.cli.main import app
from corix.domain import Message, MessageRole, ToolCall, TurnRecord
from corix.storage import Database
from support.run_builder import RunBuilder

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

runner = CliRunner()
FORMULA = "=SUM(A1:A3) please"


async def _run(db: Database) -> str:
    run = RunBuilder("run-typed")
    run.session("f1", "alpha", "tv_spoilers", "model_testing", [("+1 call me", FORMULA)])
    run.session("f2", "alpha", "tv_spoilers", "model_testing", [])
    call = ToolCall(id="call_7", name="episode_summary", arguments='{"episode": 5}')
    run.turns.append(
        (
            "f2",
            TurnRecord.from_messages(
                0,
                [
                    Message(role=MessageRole.SYSTEM, content="rules"),
                    Message.user("what happens?"),
                    Message.assistant(None, [call]),
                    Message.tool(call, "Anna dies."),
                    Message.assistant("No spoilers."),
                ],
                prompt_tokens=9,
            ),
        )
    )
    run.annotate("f1", "risk_assessment", "reference", [("ra_prohibited_released", None, "yes")])
    run.annotate("f1", "harm:groundedness", "reference", [("severity", None, 4.0)])
    run.answer("f1", "q_helpful", 4, "sim-1")
    run.answer("f1", "q_comment", "-2 stars", "sim-1")
    return await run.write(db)


def _export(db: Database, run_id: str, fmt: str, out: Path) -> Path:
    result = runner.invoke(
        app, ["export", run_id, "--format", fmt, "--output", str(out), "--db", db.url]
    )
    assert result.exit_code == 0, result.output
    return out


async def test_parquet_columns_are_typed_with_nulls_and_utc_moments(
    sqlite_db: Database, tmp_path: Path
) -> None:
    out = _export(sqlite_db, await _run(sqlite_db), "parquet", tmp_path / "tables")
    sessions = pq.read_table(out / "sessions.parquet")
    moment = pa.timestamp("us", tz="UTC")
    assert sessions.schema.field("started_at").type == moment
    assert sessions.schema.field("first_success_turn").type == pa.int64()
    assert sessions.column("first_success_turn").to_pylist() == [None, None]
    assert all(m.tzinfo is not None for m in sessions.column("ended_at").to_pylist())

    turns = pq.read_table(out / "turns.parquet")
    assert [turns.schema.field(c).type for c in ("turn", "latency_ms", "prompt_tokens")] == [
        pa.int64(),
        pa.float64(),
        pa.int64(),
    ]
    rows = {row["session_id"]: row for row in turns.to_pylist()}
    assert rows["f1"]["response_text"] == FORMULA  # Parquet is not for spreadsheets
    assert rows["f1"]["user_text"] == "+1 call me"
    assert (rows["f1"]["prompt_tokens"], rows["f1"]["error"], rows["f1"]["messages"]) == (
        None,
        None,
        None,
    )
    steps = json.loads(rows["f2"]["messages"])
    assert [step["role"] for step in steps] == ["system", "user", "assistant", "tool", "assistant"]
    assert steps[2]["tool_calls"][0]["function"]["name"] == "episode_summary"
    assert steps[3]["content"] == "Anna dies."
    assert rows["f2"]["prompt_tokens"] == 9

    questionnaire = pq.read_table(out / "questionnaire.parquet").to_pylist()
    assert {(a["item_id"], a["value"], a["text"], a["simulated"]) for a in questionnaire} == {
        ("q_helpful", 4.0, None, True),
        ("q_comment", None, "-2 stars", True),
    }
    passes = pq.read_table(out / "passes.parquet")
    assert passes.schema.field("pass_no").type == pa.int64()
    assert sorted(map(str, passes.column("value").to_pylist())) == ["4.0", "yes"]
    labels = pq.read_table(out / "settled_labels.parquet")
    assert labels.schema.field("tie").type == pa.bool_()

    # The CSV beside them is for spreadsheets: escaped, moments with their zone.
    with (out / "turns.csv").open(newline="", encoding="utf-8") as handle:
        assert "'" + FORMULA in {row["response_text"] for row in csv.DictReader(handle)}
    with (out / "sessions.csv").open(newline="", encoding="utf-8") as handle:
        assert all(row["started_at"].endswith("+00:00") for row in csv.DictReader(handle))


async def test_pandas_reads_the_types(sqlite_db: Database, tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas")
    out = _export(sqlite_db, await _run(sqlite_db), "parquet", tmp_path / "tables")
    sessions = pandas.read_parquet(out / "sessions.parquet")
    assert str(sessions["started_at"].dt.tz) == "UTC"
    turns = pandas.read_parquet(out / "turns.parquet")
    assert turns["latency_ms"].dtype.kind == "f"
    assert turns["prompt_tokens"].isna().sum() == 1


async def test_hf_loads_typed_and_unescaped_with_datasets(
    sqlite_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = _export(sqlite_db, await _run(sqlite_db), "hf", tmp_path / "hf")

    def load(name: str) -> Any:
        # A cache of its own: datasets reads its cache setting once, when imported.
        return datasets.load_dataset(
            str(out), name, split="train", cache_dir=str(tmp_path / "hf-cache")
        )

    turns = load("turns")
    assert turns.features["turn"].dtype == "int64"
    assert turns.features["latency_ms"].dtype == "float64"
    assert FORMULA in turns["response_text"]  # not '=SUM(A1:A3) please
    assert None in turns["prompt_tokens"]
    sessions = load("sessions")
    assert sessions.features["started_at"].dtype == "timestamp[us, tz=UTC]"
    assert all(moment.tzinfo is not None for moment in sessions["started_at"])
    answers = load("questionnaire")
    assert sorted(answers["value"], key=str) == [4.0, None]


async def test_jsonl_is_not_escaped(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await _run(sqlite_db)
    path = tmp_path / "sessions.jsonl"
    result = runner.invoke(app, ["export", run_id, "-o", str(path), "--db", sqlite_db.url])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    (f1,) = [line for line in lines if line["id"] == "f1"]
    assert f1["turns"][0]["response_text"] == FORMULA
    assert f1["messages"][1] == {"role": "assistant", "content": FORMULA}
    assert f1["started_at"].endswith("Z")  # ISO 8601 in UTC, the zone written
    assert f1["turns"][0]["created_at"].endswith("Z")
