"""Hostile bytes and nonsense in replies never crash the client, its cache or its ledger."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from corix.llm import (
    ChatMessage,
    ChatRequest,
    EndpointConfig,
    LLMClient,
    ModelCallError,
    ResponseCache,
)
from corix.llm.mock_server import MockServerConfig, running_mock_server


def _endpoint(base_url: str) -> EndpointConfig:
    return EndpointConfig(name="app", base_url=base_url, model="m", max_retries=0)


async def test_a_dialogue_carrying_nul_and_lone_surrogates_is_sent_cached_and_replayed(
    tmp_path: Path,
) -> None:
    cache_path = tmp_path / "cache.sqlite"
    first = ChatRequest(messages=[ChatMessage(role="user", content="Who dies?")])
    async with running_mock_server(MockServerConfig(hostile_bytes=True)) as base_url:
        with ResponseCache(cache_path) as cache:
            async with LLMClient(_endpoint(base_url), cache=cache) as client:
                reply = await client.chat(first)
                assert "\x00" in reply.text and "\ud800" in reply.text
                # The hostile reply goes back as history: the request must hash and send.
                history = [*first.messages, ChatMessage(role="assistant", content=reply.text)]
                second = ChatRequest(messages=[*history, ChatMessage(role="user", content="?")])
                follow_up = await client.chat(second)
                assert follow_up.attempts == 1 and not follow_up.cached
        with ResponseCache(cache_path) as cache:
            async with LLMClient(_endpoint(base_url), cache=cache) as client:
                again = await client.chat(second)
    assert again.cached and again.text == follow_up.text  # byte for byte, surrogates kept


def _completion(usage: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "choices": [{"message": {"role": "assistant", "content": "four words of reply"}}],
        "usage": usage,
    }


@asynccontextmanager
async def _serving(body: bytes) -> AsyncIterator[str]:
    async def answer(_: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": float("inf"), "completion_tokens": float("nan")},
        {"prompt_tokens": -3, "completion_tokens": 2.5},
        {"prompt_tokens": "many", "completion_tokens": True},
        ["not", "an", "object"],
    ],
)
async def test_nonsense_usage_is_estimated_not_fatal(usage: Any) -> None:
    request = ChatRequest(messages=[ChatMessage(role="user", content="hi")])
    body = json.dumps(_completion(usage)).encode()
    async with _serving(body) as base_url, LLMClient(_endpoint(base_url)) as client:
        reply = await client.chat(request)
    # The estimates: 4 framing tokens + "hi" (1); "four words of reply" is 19 chars → 5.
    assert (reply.prompt_tokens, reply.completion_tokens) == (5, 5)
    assert reply.text == "four words of reply"


async def test_integral_float_usage_is_taken_as_reported() -> None:
    body = json.dumps(_completion({"prompt_tokens": 12.0, "completion_tokens": 3})).encode()
    async with _serving(body) as base_url, LLMClient(_endpoint(base_url)) as client:
        reply = await client.chat(ChatRequest(messages=[ChatMessage(role="user", content="x")]))
    assert (reply.prompt_tokens, reply.completion_tokens) == (12, 3)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b"\xff\xfe not utf-8", "malformed response body"),
        (b'{"choices": [{"message": {"content": null}}]}', "no content, refusal or tool calls"),
    ],
)
async def test_a_broken_body_fails_the_call_with_its_reason(body: bytes, reason: str) -> None:
    request = ChatRequest(messages=[ChatMessage(role="user", content="hi")])
    async with _serving(body) as base_url, LLMClient(_endpoint(base_url)) as client:
        with pytest.raises(ModelCallError, match=reason):
            await client.chat(request)
