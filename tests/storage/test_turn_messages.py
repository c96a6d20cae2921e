"""A turn's messages (tool calls and results) stored and read back on SQLite and PostgreSQL;
plain turns stay two texts, and databases made before the column upgrade unchanged."""

from __future__ import annotations

from alembic import command
from sqlalchemy import inspect, select

from corix.domain import (
    EndReason,
    Level,
    Message,
    MessageRole,
    Provenance,
    SessionSource,
    ToolCall,
    TurnRecord,
)
from corix.storage import Database, create_run, ensure_application, load_session
from corix.storage.database import alembic_config
from corix.storage.orm import TurnRow
from corix.storage.sessions import SessionEnd, store_session
from corix.storage.store_records import NewSession
from corix.storage.transactions import transaction
from corix.storage.web.dialogues import turns
from support.plans import bare_plan


def _store(db: Database, session_id: str, records: list[TurnRecord]) -> None:
    app_id = ensure_application(db, "app", "demo:guarded", version="1")
    if session_id == "s0":
        create_run(db, "run-1", name="t", plan=bare_plan(), seed=1)
    session = NewSession(
        id=session_id,
        run_id="run-1",
        work_key=session_id,
        application_id=app_id,
        scenario="tv_spoilers",
        level=Level.RED_TEAMING,
        source=SessionSource.SIMULATED,
        provenance=Provenance(application="app", scenario="tv_spoilers"),
    )
    with transaction(db) as tx:
        store_session(tx, session, records, SessionEnd(session_id, EndReason.GAVE_UP))


def _agent_turn(arguments: str = '{"episode": 5}', result: str = "Anna dies.") -> TurnRecord:
    call = ToolCall(id="call_1", name="episode_summary", arguments=arguments)
    return TurnRecord.from_messages(
        0,
        [
            Message(role=MessageRole.SYSTEM, content="rules"),
            Message.user("what happens?"),
            Message.assistant(None, [call]),
            Message.tool(call, result),
            Message.assistant("No spoilers."),
        ],
        prompt_tokens=7,
    )


def test_tool_calls_and_results_read_back_as_written(any_db: Database) -> None:
    agent = _agent_turn()
    plain = TurnRecord(index=1, user_text="hi", response_text="hello")
    _store(any_db, "s0", [agent, plain])
    (back_agent, back_plain) = load_session(any_db, "s0").turns
    assert back_agent.messages == agent.messages and back_agent.tool_calls == agent.tool_calls
    assert back_agent.response_text == "No spoilers." and back_agent.prompt_tokens == 7
    assert back_plain.messages is None and back_plain.steps == plain.steps
    with any_db.session() as s:  # a plain turn's column is SQL NULL, not JSON null
        nulls = s.scalar(select(TurnRow.idx).where(TurnRow.messages.is_(None)))
        assert nulls == 1
    with transaction(any_db) as tx:  # the web's dialogue view reads the same messages
        assert [t.messages for t in turns(tx, "s0")] == [agent.messages, None]


def test_hostile_messages_are_stored_with_the_replacement_noted(any_db: Database) -> None:
    nested = "[" * 50_000 + "]" * 50_000
    hostile = _agent_turn(arguments=nested, result="a\x00b\ud800c")
    _store(any_db, "s0", [hostile])
    (back,) = load_session(any_db, "s0").turns
    assert back.tool_calls[0].arguments == nested  # stored whole, never parsed
    assert back.tool_results[0].text == "a\ufffdb\ufffdc"
    assert back.meta["replaced_unstorable"] == ["messages"]


def test_a_database_made_before_messages_upgrades_with_its_turns_unchanged(
    any_db: Database,
) -> None:
    _store(any_db, "s0", [TurnRecord(index=0, user_text="hi", response_text="hello")])
    config = alembic_config(any_db.engine)
    command.downgrade(config, "cell_usage_sources")  # the turn now sits in the old schema
    assert "messages" not in {c["name"] for c in inspect(any_db.engine).get_columns("turns")}
    command.upgrade(config, "head")
    (turn,) = load_session(any_db, "s0").turns
    assert (turn.user_text, turn.response_text, turn.messages) == ("hi", "hello", None)
