"""Limits on what comes back: a reply's size and a call's total time.

Hostile servers run in-process (aiohttp, port 0): one streams a body without end, one
declares a huge body, one dribbles a byte at a time.
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from corix.apps import build_application
from corix.domain.plan import load_plan
from corix.execution import RunStatus, execute_plan
from corix.llm import (
    ChatMessage,
    ChatRequest,
    EndpointConfig,
    LLMClient,
    ModelCallError,
    ScriptedTransport,
)
from corix.storage import Database, iter_sessions, run_totals

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_CHUNK = b"a" * 65536


async def _endless(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    await response.write(b'{"choices": [{"message": {"content": "')
    while True:
        await response.write(_CHUNK)


async def _declares_a_huge_body(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Length": str(10**12)})
    await response.prepare(request)
    await response.write(b"{")
    await asyncio.sleep(30)
    return response


async def _dribbles(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    while True:
        await response.write(b" ")
        await asyncio.sleep(0.1)


@asynccontextmanager
async def _server(handler: Handler) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


def _request() -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content="hello")])


async def _fails(endpoint: EndpointConfig) -> tuple[ModelCallError, float, int]:
    """The call's failure, how long it took and the peak memory allocated meanwhile."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        async with LLMClient(endpoint) as client:
            with pytest.raises(ModelCallError) as failure:
                await client.chat(_request())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return failure.value, time.monotonic() - started, peak


@pytest.mark.parametrize("limit", [256 * 1024, None])
async def test_an_endless_body_fails_at_the_size_limit_with_memory_flat(limit: int | None) -> None:
    async with _server(_endless) as base_url:
        endpoint = EndpointConfig(
            base_url=base_url, model="m", **({"max_reply_bytes": limit} if limit else {})
        )
        error, took, peak = await _fails(endpoint)
    bound = endpoint.max_reply_bytes
    assert f"reply larger than {bound:,} bytes (max_reply_bytes)" in str(error)
    assert error.attempts == 1  # not retried: it would only stream again
    assert peak < 4 * bound + 2 * 1024 * 1024, f"peak {peak:,} bytes for a {bound:,}-byte limit"
    assert took < 10


async def test_a_declared_length_over_the_limit_fails_before_reading() -> None:
    async with _server(_declares_a_huge_body) as base_url:
        endpoint = EndpointConfig(base_url=base_url, model="m")
        error, took, _ = await _fails(endpoint)
    assert "it declares 1,000,000,000,000 bytes" in str(error)
    assert took < 5


async def test_a_dribbling_reply_ends_at_the_call_deadline_not_after_every_retry() -> None:
    async with _server(_dribbles) as base_url:
        endpoint = EndpointConfig(
            base_url=base_url,
            model="m",
            timeout_s=0.5,
            max_retries=4,
            backoff_base_s=0.01,
            call_deadline_s=1.2,
        )
        error, took, _ = await _fails(endpoint)
    assert "call deadline of 1.2 s (call_deadline_s)" in str(error)
    assert 1.1 < took < 2.0  # 5 attempts of 0.5 s would take 2.5 s


async def test_an_http_application_reads_no_further_than_the_size_limit() -> None:
    # The http: adapter read whole bodies: an endless one grew a process to 17.8 GB.
    async with _server(_endless) as base_url:
        app = build_application(
            f"http:{base_url}/chat/completions?path=choices.0.message.content"
            "&max_reply_bytes=262144&max_retries=3"
        )
        tracemalloc.start()
        started = time.monotonic()
        try:
            session = await app.start_session()
            reply = await session.respond("hello")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            await app.close()
    assert reply.error is not None
    assert "reply larger than 262,144 bytes (max_reply_bytes)" in reply.error
    assert "failed after 1 attempt(s)" in reply.error  # not retried: it would stream again
    assert peak < 4 * 262144 + 2 * 1024 * 1024, f"peak {peak:,} bytes"
    assert time.monotonic() - started < 10


def test_the_defaults_bound_every_call() -> None:
    endpoint = EndpointConfig(base_url="http://x", model="m")
    assert endpoint.call_deadline_s == 180.0
    assert endpoint.max_reply_bytes == 8 * 1024 * 1024


async def test_a_declared_timeout_is_not_cut_to_a_deadline_nobody_set() -> None:
    # The local pilot's judge through llama_cpp.server: timeout_s 900 for a model that takes
    # minutes on a busy machine, yet every call failed at "the call deadline of 180 s".
    seen: list[float] = []

    class Recording(ScriptedTransport):
        async def send(self, request: ChatRequest, endpoint: EndpointConfig, timeout: float) -> Any:
            seen.append(timeout)
            return await super().send(request, endpoint, timeout)

    slow = EndpointConfig(base_url="http://x", model="m", timeout_s=900)
    assert slow.call_deadline_s == 2700.0  # three timeouts, as the default is three of 60 s
    async with LLMClient(slow, transport=Recording()) as client:
        await client.chat(_request())
    assert seen == [900.0]
    declared = {"base_url": "http://x", "model": "m", "timeout_s": 900}
    assert EndpointConfig(**declared, call_deadline_s=100).call_deadline_s == 100
    assert EndpointConfig(**declared, call_deadline_s="none").call_deadline_s is None
    assert EndpointConfig(base_url="http://x", model="m", timeout_s=30).call_deadline_s == 180


async def test_a_run_stores_the_reason_an_oversized_reply_failed(
    any_db: Database, tmp_path: Path
) -> None:
    async with _server(_endless) as base_url:
        plan_path = tmp_path / "plan.yaml"
        plan_path.write_text(
            "name: big\nseed: 1\nconcurrency: 2\n"
            "applications:\n  - name: endless\n"
            f'    spec: "openai:{base_url}"\n'
            "    options: {model: m, max_reply_bytes: 100000, call_deadline: 20}\n"
            "scenarios: [tv_spoilers]\n"
            "levels:\n  model_testing: {repeats: 1}\n",
            encoding="utf-8",
        )
        result = await execute_plan(load_plan(plan_path), any_db)
    assert result.status == RunStatus.FAILED or result.stats.failed_sessions > 0
    stored = list(iter_sessions(any_db))
    assert len(stored) == run_totals(any_db, result.run_id).sessions  # every one finished
    errors = [turn.error for session in stored for turn in session.turns]
    details = [session.end_detail for session in stored]
    assert errors and all("reply larger than 100,000 bytes" in (e or "") for e in errors)
    assert all("max_reply_bytes" in (d or "") for d in details)
