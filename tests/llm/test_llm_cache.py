import sqlite3
from pathlib import Path

import pytest

from corix.domain import ToolCall
from corix.llm import ChatMessage, ChatRequest, EndpointConfig, RawCompletion, ResponseCache
from corix.llm.cache import cache_key

ENDPOINT = EndpointConfig(name="a", base_url="http://127.0.0.1:1/v1", model="m")


def _request(**params: object) -> ChatRequest:
    base: dict[str, object] = {
        "model": "m",
        "messages": [ChatMessage(role="user", content="hi")],
        "temperature": 0.0,
    }
    return ChatRequest.model_validate({**base, **params})


def test_equal_requests_share_a_key() -> None:
    assert cache_key(_request(), ENDPOINT) == cache_key(_request(), ENDPOINT)


@pytest.mark.parametrize(
    "change",
    [
        {"model": "other"},
        {"messages": [ChatMessage(role="system", content="hi")]},
        {"messages": [ChatMessage(role="user", content="hi!")]},
        {"temperature": 0.7},
        {"max_tokens": 10},
        {"seed": 1},
        {"response_format": {"type": "json_object"}},
        {"extra": {"top_p": 0.5}},
    ],
)
def test_any_change_that_can_alter_the_answer_changes_the_key(change: dict[str, object]) -> None:
    assert cache_key(_request(**change), ENDPOINT) != cache_key(_request(), ENDPOINT)


def test_the_endpoint_address_is_part_of_the_key() -> None:
    elsewhere = ENDPOINT.model_copy(update={"base_url": "http://127.0.0.1:2/v1"})
    assert cache_key(_request(), elsewhere) != cache_key(_request(), ENDPOINT)


def test_replies_survive_reopening_and_are_shared_between_connections(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "cache.sqlite"
    completion = RawCompletion(text="héllo", model="m-1", prompt_tokens=3, completion_tokens=2)
    with ResponseCache(path) as writer, ResponseCache(path) as reader:
        assert reader.get("k") is None
        writer.put("k", completion)
        assert reader.get("k") == completion
        writer.put("k", completion)
        assert len(reader) == 1
    with ResponseCache(path) as reopened:
        assert reopened.get("k") == completion


def test_tool_calls_and_a_refusal_come_back_as_they_were_cached(tmp_path: Path) -> None:
    # Replies that called tools were not cached: an agent's rerun paid for every call again.
    calls = (
        ToolCall(id="call_1", name="episode_guide", arguments='{"episode": 6}'),
        ToolCall(id="call_2", name="lookup", arguments='{"q": "a\\u0000b \ud800", "broken'),
    )
    reply = RawCompletion("", "m", 10, 3, tool_calls=calls)
    refused = RawCompletion("I can't help with that.", "m", 10, 5, refusal="I can't help.")
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cache.put("tools", reply)
        cache.put("refused", refused)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert cache.get("tools") == reply
        assert cache.get("refused") == refused


def test_a_cache_file_from_before_tool_calls_opens_and_keeps_its_replies(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE responses (key TEXT PRIMARY KEY, text TEXT NOT NULL, model TEXT NOT NULL, "
        "prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, "
        "created_at REAL NOT NULL) WITHOUT ROWID"
    )
    old.execute("INSERT INTO responses VALUES ('k', 'kept', 'm', 4, 2, 0)")
    old.commit()
    old.close()
    with ResponseCache(path) as cache:
        assert cache.get("k") == RawCompletion("kept", "m", 4, 2)
        called = RawCompletion("", "m", 1, 1, tool_calls=(ToolCall(id="c", name="t"),))
        cache.put("new", called)
        assert cache.get("new") == called
