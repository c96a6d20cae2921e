"""`corix import` of every common format, from real files, stored as given (issue 33).

The files are under ``import_files/`` (its README says what made each); the Inspect AI
logs were written by the real inspect-ai and are read here without it. An ``.eval`` archive
is Zstandard-compressed: reading it needs ``zstandard`` (in the dev and inspect extras).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import invoke

from corix.config.csv_inputs import CSV_CELL_LIMIT
from corix.domain import EndReason, Message, MessageRole, SessionRecord
from corix.storage import Database, iter_sessions, measured_dialogues
from corix.storage.annotations import load_passes

FILES = Path(__file__).parent / "import_files"
CONTEXT = ("--application", "bot", "--scenario", "tv_spoilers", "--level", "field_testing")


def _import(db: Database, path: Path, *args: str) -> tuple[str, str]:
    code, out, err = invoke("import", str(path), *args, "--db", db.url)
    assert code == 0, err
    return out.split("as run ")[1].split()[0], err


def _sessions(db: Database, run_id: str) -> dict[str, SessionRecord]:
    return {s.provenance.conversation_id or "": s for s in iter_sessions(db, run_id)}


def _messages(session: SessionRecord) -> list[Message]:
    return [message for turn in session.turns for message in turn.steps]


def test_openai_messages_in_every_current_shape_are_stored_as_given(sqlite_db: Database) -> None:
    path = FILES / "openai_shapes.jsonl"
    run_id, err = _import(sqlite_db, path, *CONTEXT)
    sessions = _sessions(sqlite_db, run_id)
    given = {
        record["id"]: record
        for record in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    }
    assert sessions.keys() == given.keys()
    for key, record in given.items():
        # Every message back in OpenAI's format, equal to the file's: nothing dropped.
        assert [m.to_openai() for m in _messages(sessions[key])] == record["messages"], key
    tools = sessions["tools"]
    (turn,) = tools.turns
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_1", "lookup_episode", '{"number": 5}'),
        ("call_2", "lookup_cast", '{"episode":5}'),
    ]
    assert [r.tool_call_id for r in turn.tool_results] == ["call_1", "call_2"]
    assert (turn.user_text, turn.response_text) == (
        "Who leaves in episode 5?",
        "I won't spoil who leaves.",
    )
    assert tools.provenance.system_prompt == "You are a spoiler-free guide. Use tools."
    assert sessions["developer"].provenance.system_prompt == "Answer in one sentence."
    # Consecutive messages of one role stay one turn; the greeting opens the first turn.
    assert len(sessions["consecutive"].turns) == 1
    assert [m.role for m in sessions["greeting"].turns[0].steps][:2] == [
        MessageRole.ASSISTANT,
        MessageRole.USER,
    ]
    # A line's other keys are the source's metadata; only the dialogue without a user
    # message warns, naming the file and the line.
    monologue = sessions["monologue"]
    assert monologue.provenance.imported is not None
    assert monologue.provenance.imported.metadata == {"source_model": "gpt-4.1"}
    assert monologue.provenance.imported.line == 6
    assert err.count("warning:") == 1 and "line 6: dialogue 'monologue'" in err


def test_json_lines_keep_unicode_line_separators_inside_strings(sqlite_db: Database) -> None:
    run_id, _ = _import(sqlite_db, FILES / "separators.jsonl", *CONTEXT)
    (turn,) = _sessions(sqlite_db, run_id)["seps"].turns
    assert turn.user_text == "Line\u2028separator, next\x85line, para\u2029graph, feed\x0c."
    assert turn.response_text == "Kept\u2028as\x85given."


def test_csv_is_parsed_as_csv_line_breaks_quotes_bom_and_crlf_kept(sqlite_db: Database) -> None:
    run_id, _ = _import(sqlite_db, FILES / "dialogues.csv")
    sessions = _sessions(sqlite_db, run_id)
    (turn,) = sessions["a"].turns
    assert turn.user_text == "Dinner ideas?\nI am vegan,\r\nand allergic to nuts."
    replies = [m for m in turn.steps if m.role is MessageRole.ASSISTANT]
    assert [m.text for m in replies] == ['Try:\n- lentil soup\n- "chana" masala', "Enjoy!"]
    assert replies[0].metadata == {"channel": "web"}  # an extra column, kept per message
    assert (sessions["b"].scenario, sessions["b"].level) == ("pathfinder", "model_testing")


def test_a_csv_cell_over_the_csv_modules_default_limit_is_read(
    sqlite_db: Database, tmp_path: Path
) -> None:
    big = "spoiler " * 20_000  # 160,000 characters: over 128 KiB
    path = tmp_path / "big.csv"
    path.write_text(
        f'conversation_id,turn,role,text\nc,1,user,"{big}"\nc,2,assistant,No.\n', encoding="utf-8"
    )
    run_id, _ = _import(sqlite_db, path, *CONTEXT)
    assert _sessions(sqlite_db, run_id)["c"].turns[0].user_text == big


def test_a_csv_cell_over_16_mib_is_a_usage_error_naming_file_line_and_column(
    sqlite_db: Database, tmp_path: Path
) -> None:
    path = tmp_path / "huge.csv"
    huge = "x" * (CSV_CELL_LIMIT + 1)
    path.write_text(
        f"conversation_id,turn,role,text\nc,1,user,Hi\nc,2,assistant,{huge}\n", encoding="utf-8"
    )
    code, _, err = invoke("import", str(path), *CONTEXT, "--db", sqlite_db.url)
    assert code == 2
    assert f"{path}:3, field 'text': a cell of 16,777,217 characters; at most 16,777,216" in err


def _needs_zstandard(log: str) -> None:
    if log.endswith(".eval"):
        pytest.importorskip("zstandard", reason="an .eval archive needs zstandard")


@pytest.mark.parametrize("log", ["agent.eval", "agent.json"])
def test_an_inspect_agent_log_keeps_tools_system_scores_usage_limits_and_errors(
    sqlite_db: Database, log: str
) -> None:
    _needs_zstandard(log)
    run_id, _ = _import(sqlite_db, FILES / log)
    sessions = _sessions(sqlite_db, run_id)
    assert sessions.keys() == {"q1#1", "q2#1", "q3#1"}
    tools = sessions["q1#1"]
    assert tools.application == "mockllm/model"
    assert [[m.role.value for m in turn.steps] for turn in tools.turns] == [
        ["system", "user", "assistant", "tool", "assistant"],
        ["user", "assistant", "tool", "assistant"],
    ]
    first, second = tools.turns
    (call,) = first.tool_calls
    assert (call.name, json.loads(call.arguments)) == ("lookup_episode", {"number": 5})
    (result,) = first.tool_results
    assert (result.tool_call_id, result.name, result.text) == (
        call.id,
        "lookup_episode",
        "Episode 5: Vera leaves the lighthouse.",
    )
    assert second.user_text == "And episode 6?"  # content given as a list of parts
    assert second.steps[-1].text == "No spoilers: Vera's story goes on."
    source = tools.provenance.imported
    assert source is not None and tools.provenance.system_prompt == "Never spoil an episode."
    assert (source.format, source.task, source.sample_id, source.epoch) == (
        "inspect",
        "agent",
        "q1",
        1,
    )
    assert source.metadata["difficulty"] == "hard" and source.metadata["tags"] == [
        "spoiler",
        "tool",
    ]
    assert source.scores["includes"]["value"] == "C"
    assert source.usage["mockllm/model"]["input_tokens"] == 160
    # Each turn counts the calls that wrote its assistant messages (two, 40 + 12 each).
    assert [(t.prompt_tokens, t.completion_tokens) for t in tools.turns] == [(80, 24), (80, 24)]
    assert (tools.end_reason, source.error, source.limit) == (EndReason.USER_ENDED, None, None)

    errored = sessions["q2#1"]
    assert errored.end_reason == EndReason.SOURCE_ERROR
    assert errored.end_detail == "RuntimeError('the lighthouse index is unavailable')"
    assert errored.provenance.imported is not None
    assert errored.provenance.imported.error is not None
    assert "Traceback" in errored.provenance.imported.error["traceback"]

    limited = sessions["q3#1"]
    assert limited.end_reason == EndReason.TURN_LIMIT
    assert limited.end_detail == "Message limit reached. count: 12; limit: 12"
    assert len(_messages(limited)) == 12

    # The errored sample is failed and not measured; the other two are.
    dialogues = {d.key: d.not_measurable for d in measured_dialogues(sqlite_db, [run_id])}
    assert dialogues == {
        "q1#1": None,
        "q2#1": "source_error: RuntimeError('the lighthouse index is unavailable')",
        "q3#1": None,
    }


def test_the_eval_and_json_forms_of_one_log_import_alike(sqlite_db: Database) -> None:
    _needs_zstandard("agent.eval")

    def stored(log: str) -> list[tuple[str, list[list[dict[str, object]]]]]:
        run_id, _ = _import(sqlite_db, FILES / log)
        return [
            (key, [[m.model_dump() for m in turn.steps] for turn in session.turns])
            for key, session in sorted(_sessions(sqlite_db, run_id).items())
        ]

    assert stored("agent.eval") == stored("agent.json")


def test_runs_list_counts_an_imported_runs_sessions(any_db: Database) -> None:
    run_id, _ = _import(any_db, FILES / "agent.json")
    code, out, _ = invoke("runs", "list", "--json", "--db", any_db.url)
    assert code == 0
    (listed,) = json.loads(out)
    assert listed["id"] == run_id
    summary = listed["summary"]
    assert (summary["sessions"], summary["failed_sessions"]) == (3, 1)
    # Turns: q1 2, q2 1, q3 1. Tokens: 40 in per model call, q1 made 4 calls, q3 5.
    assert (summary["turns"], summary["prompt_tokens"]) == (4, 360)
    code, out, _ = invoke("runs", "show", run_id, "--json", "--db", any_db.url)
    assert json.loads(out)["sessions"] == summary["sessions"]
    # Every message of every turn is stored on this backend as given.
    tools = _sessions(any_db, run_id)["q1#1"]
    assert [len(turn.steps) for turn in tools.turns] == [5, 4]


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ('{"messages": [{"role": "function", "content": "x"}]}', "messages.0.role", "developer"),
        (
            '{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c"}]}]}',
            "messages.0.tool_calls.0.function.name",
            "Field required",
        ),
        ('{"messages": [{"role": "user", "content": 7}]}', "messages.0.content", "text, a list"),
    ],
)
def test_a_malformed_message_names_line_and_field_and_stores_nothing(
    sqlite_db: Database, tmp_path: Path, body: str, field: str, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "ok"}]}\n' + body, encoding="utf-8")
    code, _, err = invoke("import", str(path), *CONTEXT, "--db", sqlite_db.url)
    assert code == 2
    assert f"{path}:2, field '{field}'" in err and message in err
    assert invoke("runs", "list", "--json", "--db", sqlite_db.url)[1].strip() == "[]"


def test_csv_tool_calls_must_be_json(sqlite_db: Database, tmp_path: Path) -> None:
    path = tmp_path / "tools.csv"
    path.write_text(
        "conversation_id,turn,role,text,tool_calls\nc,1,user,Hi,\nc,2,assistant,,[{oops\n",
        encoding="utf-8",
    )
    code, _, err = invoke("import", str(path), *CONTEXT, "--db", sqlite_db.url)
    assert code == 2 and f"{path}:3, field 'tool_calls': not valid JSON" in err


def test_csv_tool_calls_and_results_are_stored(sqlite_db: Database, tmp_path: Path) -> None:
    call = '[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]'
    path = tmp_path / "tools.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(
            [
                ["conversation_id", "turn", "role", "text", "tool_calls", "tool_call_id"],
                ["c", "1", "user", "Hi", "", ""],
                ["c", "2", "assistant", "", call, ""],
                ["c", "3", "tool", "result", "", "c1"],
                ["c", "4", "assistant", "Done.", "", ""],
            ]
        )
    run_id, _ = _import(sqlite_db, path, *CONTEXT)
    (turn,) = _sessions(sqlite_db, run_id)["c"].turns
    assert [m.to_openai() for m in turn.steps] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": None, "tool_calls": json.loads(call)},
        {"role": "tool", "content": "result", "tool_call_id": "c1"},
        {"role": "assistant", "content": "Done."},
    ]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("log.eval", b"not a zip and not JSON", "is not valid JSON"),
        ("log.json", b'{"version": 1, "eval": {}}', "format version 1; corix reads version 2"),
        ("log.json", b'{"version": 2, "eval": {"model": "m"}, "samples": "x"}', "a list of"),
    ],
)
def test_an_unreadable_inspect_log_is_named(
    sqlite_db: Database, tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    code, _, err = invoke("import", str(path), *CONTEXT, "--db", sqlite_db.url)
    assert code == 2 and str(path) in err and message in err, err


def test_an_errored_sample_is_not_shown_to_annotators(sqlite_db: Database) -> None:
    run_id, _ = _import(sqlite_db, FILES / "agent.json")
    code, _, err = invoke("annotate", run_id, "--db", sqlite_db.url)
    assert code == 0, err
    annotated = {p.session_id for p in load_passes(sqlite_db, run_id=run_id)}
    by_key = {key: s.id for key, s in _sessions(sqlite_db, run_id).items()}
    assert annotated == {by_key["q1#1"], by_key["q3#1"]}


def test_a_fresh_log_from_the_installed_inspect_ai_imports_like_the_committed_one(
    sqlite_db: Database, tmp_path: Path
) -> None:
    """The committed logs were written by inspect-ai 0.3.285; this writes them again with
    whatever inspect-ai is installed (the inspect extra), so a format change shows."""
    pytest.importorskip("inspect_ai", reason="the inspect extra: pip install 'corix[inspect]'")
    script = FILES / "make_inspect_logs.py"
    subprocess.run(
        [sys.executable, str(script), str(tmp_path)], check=True, capture_output=True, timeout=120
    )

    def shape(path: Path) -> dict[str, tuple[str | None, list[list[str]]]]:
        run_id, _ = _import(sqlite_db, path)
        return {
            key: (s.end_reason, [[m.role.value for m in t.steps] for t in s.turns])
            for key, s in _sessions(sqlite_db, run_id).items()
        }

    assert shape(tmp_path / "agent.json") == shape(FILES / "agent.json")
