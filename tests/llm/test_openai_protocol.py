"""The OpenAI protocol beyond plain text: tools and tool calls, streamed replies (SSE), and a
clear one-line error for every reply the client cannot use, retried only where another
attempt could help."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from corix.domain import ToolCall
from corix.llm import ChatMessage, ChatRequest, EndpointConfig, LLMClient, ModelCallError
from corix.llm.mock_server import running_mock_server

TOOL = {
    "type": "function",
    "function": {
        "name": "episode_guide",
        "description": "What happens in an episode.",
        "parameters": {
            "type": "object",
            "properties": {"episode": {"type": "integer"}},
            "required": ["episode"],
        },
    },
}


def _endpoint(base_url: str, retries: int = 0) -> EndpointConfig:
    return EndpointConfig(
        name="app", base_url=base_url, model="m", max_retries=retries, backoff_base_s=0.001
    )


def _ask(text: str = "What happens in episode 6?", **fields: Any) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content=text)], **fields)


@pytest.mark.parametrize("stream", [False, True])
async def test_the_mock_server_calls_tools_and_answers_from_their_result(stream: bool) -> None:
    extra = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
    async with running_mock_server() as base_url, LLMClient(_endpoint(base_url)) as client:
        called = await client.chat(_ask(tools=[TOOL], extra=extra))
        (call,) = called.tool_calls
        assert (call.name, json.loads(call.arguments)) == ("episode_guide", {"episode": 6})
        assert called.text == "" and called.finish_reason == "tool_calls"
        history = [
            *_ask().messages,
            ChatMessage(role="assistant", content="", tool_calls=called.tool_calls),
            ChatMessage(role="tool", content="Vera leaves.", tool_call_id=call.id, name=call.name),
        ]
        answer = await client.chat(ChatRequest(messages=history, tools=[TOOL], extra=extra))
    assert answer.text.endswith("episode_guide says: Vera leaves.") and not answer.tool_calls
    assert answer.prompt_tokens > 0  # streamed: from the usage chunk


async def test_a_streamed_reply_is_sent_as_openai_streams_it() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi there"}], "stream": True}
    async with running_mock_server() as base_url, aiohttp.ClientSession() as http:
        response = await http.post(f"{base_url}/chat/completions", json=body)
        assert response.content_type == "text/event-stream"
        events = [line for line in (await response.text()).split("\n\n") if line]
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-1]]
    assert {chunk["object"] for chunk in chunks} == {"chat.completion.chunk"}
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert text.startswith("Mock reply") and text.endswith("to: hi there")
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


@asynccontextmanager
async def _client(
    body: bytes, *, status: int = 200, content_type: str = "application/json", retries: int = 0
) -> AsyncIterator[tuple[LLMClient, list[int]]]:
    """A client of a server that answers every request with ``body``; the list counts
    the requests it saw."""
    seen: list[int] = []

    async def answer(_: web.Request) -> web.Response:
        seen.append(1)
        return web.Response(status=status, body=body, content_type=content_type)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    base_url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    try:
        async with LLMClient(_endpoint(base_url, retries)) as client:
            yield client, seen
    finally:
        await runner.cleanup()


def _sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    return ("".join(events) + ("data: [DONE]\n\n" if done else "")).encode()


def _delta(**delta: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


_QUOTA = {
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "code": "insufficient_quota",
    }
}
_TOOL_ONLY = {
    "choices": [
        {
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            }
        }
    ]
}


@pytest.mark.parametrize(
    ("body", "status", "content_type", "reason", "attempts"),
    [
        (json.dumps({"choices": []}), 200, "application/json", "the reply has no choices", 1),
        (json.dumps(_QUOTA), 429, "application/json", "HTTP 429: insufficient_quota: You", 1),
        (json.dumps(_TOOL_ONLY), 200, "application/json", r"only with tool calls \(f\)", 1),
        (_sse(_delta(content="cut")), 200, "text/event-stream", "ended before", 3),
        (_sse({"error": {"message": "overloaded"}}), 200, "text/event-stream", "overloaded", 1),
        (b"data: {not json\n\n", 200, "text/event-stream", "malformed response body", 3),
    ],
)
async def test_each_unusable_reply_fails_in_one_line_retried_only_when_it_could_pass(
    body: str | bytes, status: int, content_type: str, reason: str, attempts: int
) -> None:
    raw = body.encode() if isinstance(body, str) else body
    if reason == "ended before":
        raw = raw.replace(b"data: [DONE]\n\n", b"")
    serving = _client(raw, status=status, content_type=content_type, retries=2)
    async with serving as (client, seen):
        with pytest.raises(ModelCallError, match=reason) as failed:
            await client.chat(_ask())
    assert "\n" not in str(failed.value) and len(seen) == attempts


async def test_a_refusal_and_a_stream_not_asked_for_are_read_as_replies() -> None:
    refusal = {"choices": [{"message": {"role": "assistant", "content": None, "refusal": "No."}}]}
    async with _client(json.dumps(refusal).encode()) as (client, _):
        reply = await client.chat(_ask())
    assert (reply.text, reply.refusal) == ("No.", "No.")
    call = {"index": 0, "id": "c9", "function": {"name": "f", "arguments": '{"a":'}}
    streamed = _sse(
        _delta(role="assistant", content="Let me "),
        _delta(content="check."),
        _delta(tool_calls=[call]),
        _delta(tool_calls=[{"index": 0, "function": {"arguments": " 1}"}}]),
    )
    async with _client(streamed, content_type="text/plain") as (client, _):
        reply = await client.chat(_ask())  # no tools offered: the text is still usable
    assert reply.text == "Let me check."
    assert reply.tool_calls == (ToolCall(id="c9", name="f", arguments='{"a": 1}'),)
