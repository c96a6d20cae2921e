"""The message record of a turn: OpenAI's shapes in and out, turns split as adjacency
pairs, texts derived for the readers of a plain turn, and the one rendering."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from corix.domain import (
    ContentPart,
    Message,
    MessageRole,
    ToolCall,
    TurnRecord,
    render_steps,
    split_turns,
    step_views,
)

CALL = ToolCall(id="call_abc123", name="episode_summary", arguments='{"episode": 5}')


def _agent_turn() -> list[Message]:
    return [
        Message.user("What happens in episode 5?"),
        Message.assistant("Let me look.", [CALL]),
        Message.tool(CALL, "Anna betrays the crew."),
        Message.assistant("I can't tell you that."),
    ]


def test_openai_messages_round_trip_whole() -> None:
    given = [
        {"role": "developer", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image_url", "image_url": {"url": "x"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{bad"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "42"},
        {"role": "assistant", "content": "", "refusal": "I can't."},
    ]
    messages = [Message.from_openai(m) for m in given]
    assert [m.to_openai() for m in messages] == given
    assert messages[1].text == "hi\n[image_url]"
    assert messages[2].tool_calls[0].arguments == "{bad"  # kept as written, not parsed


def test_unknown_fields_are_kept_and_a_misplaced_field_is_refused() -> None:
    kept = Message.from_openai({"role": "assistant", "content": "x", "audio": {"id": "a"}})
    assert kept.metadata == {"audio": {"id": "a"}}
    with pytest.raises(ValidationError, match="cannot make tool calls"):
        Message(role=MessageRole.USER, tool_calls=(CALL,))
    with pytest.raises(ValidationError, match=r"tool_calls\.0\.name"):
        Message.from_openai({"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]})


def test_dialogues_split_into_adjacency_pairs() -> None:
    system = Message(role=MessageRole.SYSTEM, content="rules")
    greeting = Message.assistant("Hello!")
    first, second = _agent_turn(), [Message.user("a"), Message.user("b"), Message.assistant("c")]
    turns = split_turns([system, greeting, *first, system, *second])
    assert turns == [(system, greeting, *first), (system, *second)]


def test_a_turn_of_messages_keeps_them_and_derives_its_texts() -> None:
    turn = TurnRecord.from_messages(0, _agent_turn())
    assert turn.user_text == "What happens in episode 5?"
    assert turn.response_text == "Let me look.\n\nI can't tell you that."
    assert turn.tool_calls == [CALL]
    assert [m.text for m in turn.tool_results] == ["Anna betrays the crew."]
    assert turn.steps == tuple(_agent_turn())
    # Only tool calls, no words: the application said nothing the user saw.
    silent = [Message.user("hi"), Message.assistant(None, [CALL]), Message.tool(CALL, "x")]
    assert TurnRecord.from_messages(0, silent).response_text is None


def test_a_plain_exchange_stays_a_plain_turn() -> None:
    turn = TurnRecord.from_messages(2, [Message.user("hi"), Message.assistant("hello")])
    assert turn.messages is None and (turn.user_text, turn.response_text) == ("hi", "hello")
    assert turn.steps == (Message.user("hi"), Message.assistant("hello"))
    parts = Message(role=MessageRole.USER, content=(ContentPart(type="text", text="hi"),))
    assert TurnRecord.from_messages(0, [parts, Message.assistant("x")]).messages is not None
    failed = TurnRecord(index=0, user_text="hi", error="timeout")
    assert failed.steps == (Message.user("hi"),) and failed.tool_calls == []


def test_blinded_views_hide_instructions_and_provider_ids() -> None:
    steps = [Message(role=MessageRole.SYSTEM, content="You are AcmeBot"), *_agent_turn()]
    assert render_steps(steps, blinded=True) == (
        "user: What happens in episode 5?\n"
        "assistant: Let me look.\n"
        'tool call: episode_summary({"episode": 5}) [#1]\n'
        "tool result: episode_summary [#1]: Anna betrays the crew.\n"
        "assistant: I can't tell you that."
    )
    full = render_steps(steps, blinded=False)
    assert "system: You are AcmeBot" in full and "[call_abc123]" in full


def test_huge_and_hostile_steps_render_cut_and_unparsed() -> None:
    nested = "[" * 100_000 + "]" * 100_000  # would overflow a recursive JSON parser
    call = ToolCall(id="c\x00", name="f\ud800", arguments=nested)
    failed = Message.tool(call, "", error="tool crashed")
    views = step_views([Message.assistant(None, [call]), failed], blinded=False, limit=50)
    assert views[0].text.endswith("… [199959 more characters]")
    assert views[1].text == "f\ud800 [c\x00] failed: tool crashed"
