from pathlib import Path

import pytest

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
