"""A tool-using turn seen everywhere a dialogue is shown: `corix sessions show`, the
export's turn rows, the report's transcripts and the annotation page; hostile text in a
tool's result stays text."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.cli.main import app
from corix.domain import (
    ApplicationEntry,
    EndReason,
    Level,
    LevelSettings,
    Message,
    MessageRole,
    Plan,
    Provenance,
    SessionSource,
    ToolCall,
    TurnRecord,
    step_views,
)
from corix.execution import execute_plan
from corix.report import write_report
from corix.storage import Database, ensure_application
from corix.storage.sessions import SessionEnd, store_session
from corix.storage.store_records import NewSession
from corix.storage.transactions import transaction
from corix.web.rendering import templates
from corix.web.services.dialogues import BlindTurn

HOSTILE = '<script>alert("tool")</script>'
CALL = ToolCall(id="call_x1", name="episode_guide", arguments='{"episode": 2}')
runner = CliRunner()


def _hostile_turn() -> TurnRecord:
    return TurnRecord.from_messages(
        0,
        [
            Message(role=MessageRole.SYSTEM, content="You are AcmeBot."),
            Message.user("What happened in episode 2?"),
            Message.assistant(None, [CALL]),
            Message.tool(CALL, f"Episode 2 {HOSTILE}"),
            Message.assistant(f"Here you go: {HOSTILE}"),
        ],
    )


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Database, str]:
    folder = tmp_path_factory.mktemp("agent")
    db = Database(f"sqlite:///{folder / 'corix.db'}")
    plan = Plan(
        name="agent",
        applications=[ApplicationEntry(name="agent", spec="demo:agent")],
        scenarios=["tv_spoilers"],
        levels={Level.MODEL_TESTING: LevelSettings(sessions=1)},
    )
    run_id = asyncio.run(execute_plan(plan, db)).run_id
    app_id = ensure_application(db, "agent", "demo:agent", version="1")
    session = NewSession(
        id="hostile",
        run_id=run_id,
        work_key="hostile",
        application_id=app_id,
        scenario="tv_spoilers",
        level=Level.MODEL_TESTING,
        source=SessionSource.SCRIPTED,
        provenance=Provenance(application="agent", scenario="tv_spoilers"),
    )
    with transaction(db) as tx:
        end = SessionEnd("hostile", EndReason.SCRIPT_DONE)
        store_session(tx, session, [_hostile_turn()], end)
    return db, run_id


def test_sessions_show_lists_every_step(agent_run: tuple[Database, str]) -> None:
    db, _ = agent_run
    shown = runner.invoke(app, ["sessions", "show", "hostile", "--db", db.url])
    assert shown.exit_code == 0, shown.output
    assert "[0] system: You are AcmeBot." in shown.output
    assert '[0] tool call: episode_guide({"episode": 2}) [call_x1]' in shown.output
    assert f"[0] tool result: episode_guide [call_x1]: Episode 2 {HOSTILE}" in shown.output


def test_the_export_keeps_the_messages_whole(
    agent_run: tuple[Database, str], tmp_path: Path
) -> None:
    db, run_id = agent_run
    out = tmp_path / "tables"
    args = ["export", run_id, "--format", "csv", "--output", str(out), "--db", db.url]
    assert runner.invoke(app, args).exit_code == 0
    with (out / "turns.csv").open(newline="", encoding="utf-8") as handle:
        rows = {row["session_id"]: row for row in csv.DictReader(handle)}
    messages = json.loads(rows["hostile"]["messages"])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[2]["tool_calls"][0]["function"] == {
        "name": "episode_guide",
        "arguments": '{"episode": 2}',
    }
    assert "tool call: episode_guide" in rows["hostile"]["steps"]
    # The demo agent's own turns called the episode guide too.
    agent_rows = [row for key, row in rows.items() if key != "hostile"]
    assert any("episode_guide" in row["steps"] for row in agent_rows)


def test_the_report_shows_steps_escaped(agent_run: tuple[Database, str], tmp_path: Path) -> None:
    db, run_id = agent_run
    html = write_report(db, run_id, tmp_path / "report", bootstrap=0).html.read_text("utf-8")
    assert "· tool call</div>" in html and "· tool result</div>" in html
    assert "&lt;script&gt;alert(" in html and HOSTILE not in html


def test_the_annotation_page_shows_blinded_steps_escaped() -> None:
    turn = _hostile_turn()
    assert turn.messages is not None
    blind = BlindTurn(
        0, turn.user_text, turn.response_text, tuple(step_views(turn.messages, blinded=True))
    )
    page = templates.from_string(
        '{% from "macros.html" import turn_bubbles %}{{ turn_bubbles(turn) }}'
    ).render(turn=blind)
    assert "Tool call" in page and "Tool result" in page
    assert "&lt;script&gt;alert(" in page and HOSTILE not in page
    assert "AcmeBot" not in page and "call_x1" not in page and "[#1]" in page


def test_the_jsonl_export_carries_each_turns_messages(agent_run: tuple[Database, str]) -> None:
    db, run_id = agent_run
    exported = runner.invoke(app, ["export", run_id, "--db", db.url])
    assert exported.exit_code == 0, exported.output
    sessions = {s["id"]: s for s in map(json.loads, exported.output.strip().split("\n"))}
    (turn,) = sessions["hostile"]["turns"]
    assert [m["role"] for m in turn["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert turn["messages"][2]["tool_calls"][0]["arguments"] == '{"episode": 2}'
