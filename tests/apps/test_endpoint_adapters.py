"""OpenAI-compatible and generic HTTP JSON applications, over real HTTP on loopback."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from corix.apps import build_application
from corix.domain import Level, LevelSettings
from corix.errors import CorixError
from corix.execution.simulators import simulator_endpoint
from corix.llm.mock_server import MockServerConfig, running_mock_server


async def test_openai_application_keeps_the_dialogue_history() -> None:
    async with running_mock_server(MockServerConfig()) as base_url:
        app = build_application(f"openai:{base_url}?model=corix-mock&system=Be+brief")
        await app.open()
        assert await app.version() == "corix-mock"
        session = await app.start_session()
        first = await session.respond("hello there")
        second = await session.respond("and again")
        await app.close()
    assert first.ok
    assert second.ok
    assert first.text != second.text
    assert (first.prompt_tokens or 0) < (second.prompt_tokens or 0)  # history is resent


async def test_openai_application_records_failures_as_errors() -> None:
    config = MockServerConfig(fail_500=1.0)
    async with running_mock_server(config) as base_url:
        app = build_application(f"openai:{base_url}?model=m&max_retries=1")
        session = await app.start_session()
        reply = await session.respond("hi")
        await app.close()
    assert not reply.ok
    assert reply.error is not None
    assert "after 2 attempt(s)" in reply.error


@pytest.fixture
async def json_endpoint() -> AsyncIterator[tuple[str, list[dict[str, object]]]]:
    seen: list[dict[str, object]] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        if body["message"] == "break":
            return web.json_response({"unexpected": True})
        if body["message"] == "deep":
            return web.Response(body=b"[" * 100_000 + b"]" * 100_000)
        if body["message"] == "binary":
            return web.Response(body=b"\xff\xfe\x00 not UTF-8")
        if body["message"] == "hostile":
            return web.json_response({"data": {"choices": [{"reply": "a\x00b\ud800c"}]}})
        return web.json_response({"data": {"choices": [{"reply": f"got {body['message']}"}]}})

    app = web.Application()
    app.router.add_post("/chat", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}/chat", seen
    await runner.cleanup()


async def test_http_json_application_templates_body_and_reads_path(
    json_endpoint: tuple[str, list[dict[str, object]]],
) -> None:
    url, seen = json_endpoint
    app = build_application(f"http:{url}?path=data.choices.0.reply")
    session = await app.start_session()
    first = await session.respond('say "hi"')
    second = await session.respond("more")
    broken = await session.respond("break")
    await app.close()
    assert first.text == 'got say "hi"'
    assert second.text == "got more"
    assert seen[1]["history"] == [
        {"role": "user", "content": 'say "hi"'},
        {"role": "assistant", "content": 'got say "hi"'},
    ]
    assert broken.error is not None
    assert "no 'data' on path" in broken.error
    assert json.dumps(seen[0])  # the body was valid JSON


async def test_http_json_application_survives_hostile_and_broken_replies(
    json_endpoint: tuple[str, list[dict[str, object]]],
) -> None:
    url, seen = json_endpoint
    app = build_application(f"http:{url}?path=data.choices.0.reply&max_retries=0")
    session = await app.start_session()
    hostile = await session.respond("hostile")
    after = await session.respond("more")  # the hostile reply goes back as history
    deep = await session.respond("deep")
    binary = await session.respond("binary")
    await app.close()
    assert hostile.text == "a\x00b\ud800c"
    assert after.text == "got more"
    assert seen[1]["history"][1] == {"role": "assistant", "content": "a\x00b\ud800c"}
    assert deep.error is not None and "nested too deeply" in deep.error
    assert binary.error is not None and "response is not JSON" in binary.error


def test_http_json_needs_a_path() -> None:
    with pytest.raises(CorixError, match="'path' option"):
        build_application("http:http://127.0.0.1:1/chat")


async def test_retry_limits_are_options_of_the_spec() -> None:
    # The server asks to come back in 30 s; the spec waits at most 0.2 s: the turn fails
    # at once with the reason instead of freezing the dialogue.
    config = MockServerConfig(fail_429=1.0, retry_after_s=30)
    async with running_mock_server(config) as base_url:
        app = build_application(
            f"openai:{base_url}?model=m&retry_after_max_s=0.2&call_deadline_s=5"
        )
        session = await app.start_session()
        started = time.perf_counter()
        reply = await session.respond("hi")
        await app.close()
    assert time.perf_counter() - started < 5
    assert reply.error is not None
    assert "asked to wait 30 s, more than the 0.2 s corix waits" in reply.error


def test_a_simulator_endpoint_takes_the_retry_limits() -> None:
    settings = LevelSettings.model_validate(
        {
            "engine": "llm",
            "simulator": {
                "base_url": "http://127.0.0.1:1/v1",
                "model": "m",
                "retry_after_max_s": 5,
                "call_deadline_s": 30,
            },
        }
    )
    assert settings.simulator is not None
    config = simulator_endpoint(Level.RED_TEAMING, settings.simulator)
    assert (config.retry_after_max_s, config.call_deadline_s) == (5, 30)


async def test_openai_application_sends_the_plans_extra_headers() -> None:
    seen: list[dict[str, str]] = []

    async def chat(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        reply = {"role": "assistant", "content": "hi"}
        return web.json_response(
            {
                "model": "m",
                "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1},
            }
        )

    server = web.Application()
    server.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(server)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        options = {"headers": {"X-Team": "red", "OpenAI-Organization": "org-7"}}
        app = build_application(f"openai:http://127.0.0.1:{port}/v1?model=m", options)
        session = await app.start_session()
        reply = await session.respond("hello")
        await app.close()
    finally:
        await runner.cleanup()
    assert reply.ok, reply.error
    assert seen[0]["X-Team"] == "red" and seen[0]["OpenAI-Organization"] == "org-7"
    with pytest.raises(CorixError, match="headers"):
        build_application("openai:http://127.0.0.1:9/v1?model=m&headers=X-Team")
