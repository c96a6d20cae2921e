"""A built-in OpenAI-compatible server backed by :class:`MockModel`, with injected faults.

It answers ``POST /v1/chat/completions`` (and ``/chat/completions``) with usage counts,
streamed as server-sent events when the request asks (``stream: true``, with a usage chunk
when ``stream_options.include_usage``), and with tool calls when the request offers tools
(see :class:`~corix.llm.mock_model.MockModel`),
``GET /v1/models``, and ``GET /mock/stats`` (requests seen, requests in flight and the
most ever in flight, connections that carried them, faults injected, requests per second,
and requests in flight over time, each tenth of a second's mean) so that tests can observe
the client from the server's side. It does the least work per
request, since in benchmarks it shares the machine with the client it measures.

Faults are deterministic: request number ``n`` (from 0) gets the fault whose band of
``[0, 1)`` holds ``frac(n × golden ratio)``. This low-discrepancy sequence hits each rate
closely even over a few requests, and the first request always gets the first fault
with a non-zero rate (in the order 429, 500, timeout, malformed).

Run it with ``python -m corix.llm.mock_server --port 8000 --latency-ms 100``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import time
import weakref
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from aiohttp import web
from pydantic import BaseModel, Field, ValidationError, model_validator

from corix.domain import JsonObject
from corix.llm.mock_model import MOCK_MODEL_NAME, MockModel
from corix.llm.models import ChatMessage, ChatRequest
from corix.llm.tokens import estimate_prompt_tokens, estimate_tokens

_GOLDEN_RATIO_FRACTION = 0.6180339887498949
IN_FLIGHT_BUCKET_S = 0.1
"""The width of the time buckets of the in-flight series in ``/mock/stats``."""
_CHAT_FIELDS = (
    "model",
    "messages",
    "temperature",
    "max_tokens",
    "seed",
    "response_format",
    "tools",
)


class Fault(StrEnum):
    RATE_LIMITED = "429"
    SERVER_ERROR = "500"
    TIMEOUT = "timeout"
    MALFORMED = "malformed"


class MockServerConfig(BaseModel):
    """Where the mock server listens, how slow it is and which share of requests fail.

    ``port`` 0 picks a free port. A ``fail_timeout`` request stalls for ``hang_s``
    seconds (longer than any sensible client timeout) before answering.
    """

    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535)
    latency_ms: float = Field(default=0.0, ge=0)
    fail_429: float = Field(default=0.0, ge=0, le=1)
    fail_500: float = Field(default=0.0, ge=0, le=1)
    fail_timeout: float = Field(default=0.0, ge=0, le=1)
    fail_malformed: float = Field(default=0.0, ge=0, le=1)
    retry_after_s: float = Field(default=1.0, ge=0)
    hang_s: float = Field(default=300.0, ge=0)
    model_name: str = MOCK_MODEL_NAME
    judge_noise: float = Field(default=1.0, ge=0, le=1)
    """Share of seeds whose JSON reply is a fresh draw, not the request's settled answer."""
    refuse_json_schema: bool = False
    """Answer a ``json_schema`` response format as llama-cpp-python's server does: HTTP 500
    with a validation error (it accepts ``text`` and ``json_object`` only)."""
    one_at_a_time: bool = False
    """Serve one request at a time, as a single local model does; the rest queue."""
    context_window: int | None = Field(default=None, ge=1)
    """Refuse, as vLLM and OpenAI do (HTTP 400 naming the window), a request whose
    estimated prompt and ``max_tokens`` exceed this many tokens."""
    llama_cpp_props: bool = False
    """Answer ``GET /props`` as llama.cpp's server does, with ``context_window`` as
    ``n_ctx``; else ``/props`` is not found and ``/v1/models`` states it as vLLM does
    (``max_model_len``)."""
    hostile_bytes: bool = False
    """Every reply carries NUL and a lone surrogate: appended to a text reply, and to every
    ``reasoning`` of a JSON reply (which stays valid JSON, its answers untouched)."""

    @model_validator(mode="after")
    def _check_fault_rates(self) -> MockServerConfig:
        if sum(rate for _, rate in self.fault_rates()) > 1.0:
            raise ValueError("the fault rates add up to more than 1")
        return self

    def fault_rates(self) -> list[tuple[Fault, float]]:
        return [
            (Fault.RATE_LIMITED, self.fail_429),
            (Fault.SERVER_ERROR, self.fail_500),
            (Fault.TIMEOUT, self.fail_timeout),
            (Fault.MALFORMED, self.fail_malformed),
        ]


class FaultPlan:
    """Which fault, if any, request number ``n`` gets (see the module docstring)."""

    def __init__(self, rates: Sequence[tuple[Fault, float]]) -> None:
        self._bands: list[tuple[float, Fault]] = []
        upper = 0.0
        for fault, rate in rates:
            if rate > 0:
                upper += rate
                self._bands.append((upper, fault))

    def fault_for(self, n: int) -> Fault | None:
        point = (n * _GOLDEN_RATIO_FRACTION) % 1.0
        for upper, fault in self._bands:
            if point < upper:
                return fault
        return None


@dataclass
class _ServerState:
    config: MockServerConfig
    model: MockModel
    faults: FaultPlan
    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    injected: dict[str, int] = field(default_factory=lambda: {f.value: 0 for f in Fault})
    serial: asyncio.Lock = field(default_factory=asyncio.Lock)
    started: float = field(default_factory=time.monotonic)
    per_second: dict[int, int] = field(default_factory=dict)
    """Requests that arrived in each whole second since the server started."""
    cache_prompt: int = 0
    """Chat requests that asked llama.cpp's server to keep their prompt (``cache_prompt``)."""
    connections: int = 0
    """Connections that have carried a chat request: keep-alive reuse keeps this low."""
    seen_transports: weakref.WeakSet[asyncio.BaseTransport] = field(default_factory=weakref.WeakSet)
    busy_s: dict[int, float] = field(default_factory=dict)
    """Request-seconds in flight in each bucket of ``IN_FLIGHT_BUCKET_S`` since the start:
    divided by the width, the mean number of requests in flight then."""
    changed: float = 0.0
    """When ``in_flight`` last changed, in seconds since the start."""

    def count_in_flight(self, change: int) -> None:
        """Change ``in_flight`` by ``change``, first adding the time it held its old value
        to the buckets that time spans."""
        now = time.monotonic() - self.started
        begin, bucket = self.changed, int(self.changed / IN_FLIGHT_BUCKET_S)
        while self.in_flight and begin < now:  # the bucket counts up: rounding cannot stall it
            end = min(now, (bucket + 1) * IN_FLIGHT_BUCKET_S)
            held = self.in_flight * max(0.0, end - begin)
            self.busy_s[bucket] = self.busy_s.get(bucket, 0.0) + held
            begin, bucket = end, bucket + 1
        self.changed = now
        self.in_flight += change


_STATE = web.AppKey("state", _ServerState)


def build_mock_app(config: MockServerConfig | None = None) -> web.Application:
    """The mock server's aiohttp application."""
    config = config or MockServerConfig()
    app = web.Application()
    app[_STATE] = _ServerState(
        config=config,
        model=MockModel(name=config.model_name, judge_noise=config.judge_noise),
        faults=FaultPlan(config.fault_rates()),
    )
    app.router.add_post("/v1/chat/completions", _chat_completions)
    app.router.add_post("/chat/completions", _chat_completions)
    app.router.add_get("/v1/models", _models)
    app.router.add_get("/models", _models)
    app.router.add_get("/props", _props)
    app.router.add_get("/mock/stats", _stats)
    return app


@contextlib.asynccontextmanager
async def running_mock_server(config: MockServerConfig | None = None) -> AsyncIterator[str]:
    """Serve the mock in this event loop; yields its base URL (``http://host:port/v1``)."""
    config = config or MockServerConfig()
    # Cancel a stalled handler when its client gives up, so injected timeouts end at once.
    runner = web.AppRunner(
        build_mock_app(config),
        access_log=None,
        handler_cancellation=True,
        shutdown_timeout=1.0,
    )
    await runner.setup()
    try:
        await web.TCPSite(runner, config.host, config.port).start()
        host, port = runner.addresses[0][:2]
        yield f"http://{f'[{host}]' if ':' in host else host}:{port}/v1"
    finally:
        await runner.cleanup()


def run_mock_server(config: MockServerConfig) -> None:
    """Serve until SIGINT or SIGTERM; prints the base URL once listening."""
    asyncio.run(_serve_until_stopped(config))


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m corix.llm.mock_server`` with the same options as ``corix mock-server``."""
    parser = argparse.ArgumentParser(
        prog="python -m corix.llm.mock_server",
        description="Serve a deterministic OpenAI-compatible mock model.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    for fault in ("429", "500", "timeout", "malformed"):
        parser.add_argument(
            f"--fail-{fault}",
            type=float,
            default=0.0,
            metavar="RATE",
            help=f"share of requests that get the {fault} fault",
        )
    args = parser.parse_args(argv)
    run_mock_server(
        MockServerConfig(
            host=args.host,
            port=args.port,
            latency_ms=args.latency_ms,
            fail_429=args.fail_429,
            fail_500=args.fail_500,
            fail_timeout=args.fail_timeout,
            fail_malformed=args.fail_malformed,
        )
    )


async def _serve_until_stopped(config: MockServerConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # not available on Windows
            loop.add_signal_handler(signum, stop.set)
    async with running_mock_server(config) as base_url:
        print(f"corix mock server listening on {base_url}", flush=True)
        await stop.wait()


async def _chat_completions(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    number = state.requests
    state.requests += 1
    second = int(time.monotonic() - state.started)
    state.per_second[second] = state.per_second.get(second, 0) + 1
    if request.transport is not None and request.transport not in state.seen_transports:
        state.seen_transports.add(request.transport)
        state.connections += 1
    state.count_in_flight(+1)
    state.max_in_flight = max(state.max_in_flight, state.in_flight)
    try:
        if state.config.one_at_a_time:
            async with state.serial:
                return await _answer(request, state, state.faults.fault_for(number), number)
        return await _answer(request, state, state.faults.fault_for(number), number)
    finally:
        state.count_in_flight(-1)


async def _answer(
    request: web.Request, state: _ServerState, fault: Fault | None, number: int
) -> web.StreamResponse:
    config = state.config
    if fault is not None:
        state.injected[fault.value] += 1
    if config.latency_ms:
        await asyncio.sleep(config.latency_ms / 1000.0)
    if fault is Fault.RATE_LIMITED:
        return _error(429, "injected rate limit", {"Retry-After": f"{config.retry_after_s:g}"})
    if fault is Fault.SERVER_ERROR:
        return _error(500, "injected server error")
    if fault is Fault.TIMEOUT:
        await asyncio.sleep(config.hang_s)
    if fault is Fault.MALFORMED:
        return web.Response(body=b'{"choices": [{"message": ', content_type="application/json")
    try:
        chat = _chat_request(json.loads(await request.read()))
    except (ValueError, TypeError, ValidationError) as exc:
        return _error(400, f"invalid chat completion request: {exc}")
    requested = (chat.response_format or {}).get("type")
    if config.refuse_json_schema and requested == "json_schema":
        return _error(
            500,
            "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  "
            "Input should be 'text' or 'json_object'",
        )
    if chat.extra.get("cache_prompt") is True:
        state.cache_prompt += 1
    window = config.context_window
    asked = estimate_prompt_tokens(chat) + (chat.max_tokens or 0)
    if window is not None and asked > window:
        return _error(
            400,
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{asked} tokens. Please reduce the length of the messages or completion.",
        )
    text, tool_calls = state.model.answer(chat)
    finish_reason = "tool_calls" if tool_calls else "stop"
    if chat.max_tokens is not None and estimate_tokens(text) > chat.max_tokens:
        text, finish_reason = text[: chat.max_tokens * 4], "length"
    if config.hostile_bytes:
        text = _hostile(text)
    prompt_tokens = estimate_prompt_tokens(chat)
    completion_tokens = estimate_tokens(text)
    message: JsonObject = {"role": "assistant", "content": text}
    if tool_calls:
        message = ChatMessage(role="assistant", content="", tool_calls=tool_calls).to_openai()
    head = {
        "id": f"chatcmpl-mock-{number}",
        "created": int(time.time()),
        "model": chat.model or config.model_name,
    }
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if chat.extra.get("stream") is True:
        options = chat.extra.get("stream_options")
        with_usage = isinstance(options, dict) and options.get("include_usage") is True
        chunks = _stream_chunks(head, message, finish_reason, usage if with_usage else None)
        return await _sse(request, chunks)
    choice = {"index": 0, "message": message, "finish_reason": finish_reason}
    return _json({**head, "object": "chat.completion", "choices": [choice], "usage": usage})


def _stream_chunks(
    head: JsonObject,
    message: JsonObject,
    finish_reason: str,
    usage: JsonObject | None,
) -> list[JsonObject]:
    """``message`` as OpenAI streams it: a role, the text a few words at a time (or each
    tool call's name, then its arguments in two pieces), the finish reason, the usage."""
    chunk = {**head, "object": "chat.completion.chunk"}
    deltas: list[JsonObject] = [{"role": "assistant", "content": ""}]
    words = (message.get("content") or "").split(" ")
    deltas += [{"content": word if i == 0 else " " + word} for i, word in enumerate(words) if word]
    for index, call in enumerate(message.get("tool_calls") or ()):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        for piece in (arguments[:half], arguments[half:]):
            deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    chunks = [
        {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        for delta in deltas
    ]
    chunks.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}]})
    if usage is not None:
        chunks.append({**chunk, "choices": [], "usage": usage})
    return chunks


async def _sse(request: web.Request, chunks: list[JsonObject]) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for chunk in chunks:
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


_HOSTILE_SUFFIX = " \x00\ud800"


def _hostile(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return text + _HOSTILE_SUFFIX
    return json.dumps(_with_hostile_reasoning(value)) if isinstance(value, dict) else text


def _with_hostile_reasoning(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: item + _HOSTILE_SUFFIX
            if key == "reasoning" and isinstance(item, str)
            else _with_hostile_reasoning(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_with_hostile_reasoning(item) for item in value]
    return value


def _chat_request(payload: Any) -> ChatRequest:
    if not isinstance(payload, dict):
        raise TypeError("the body must be a JSON object")
    named = {key: payload[key] for key in _CHAT_FIELDS if key in payload}
    extra = {key: value for key, value in payload.items() if key not in _CHAT_FIELDS}
    return ChatRequest.model_validate({**named, "extra": extra})


async def _models(request: web.Request) -> web.Response:
    config = request.app[_STATE].config
    model: JsonObject = {"id": config.model_name, "object": "model", "owned_by": "corix"}
    if config.context_window is not None and not config.llama_cpp_props:
        model["max_model_len"] = config.context_window
    return _json({"object": "list", "data": [model]})


async def _props(request: web.Request) -> web.Response:
    config = request.app[_STATE].config
    if not config.llama_cpp_props or config.context_window is None:
        return _error(404, "not found")
    return _json({"default_generation_settings": {"n_ctx": config.context_window}})


async def _stats(request: web.Request) -> web.Response:
    state = request.app[_STATE]
    return _json(
        {
            "requests": state.requests,
            "in_flight": state.in_flight,
            "max_in_flight": state.max_in_flight,
            "connections": state.connections,
            "cache_prompt": state.cache_prompt,
            "faults": state.injected,
            "per_second": state.per_second,
            "in_flight_series": {
                bucket: busy / IN_FLIGHT_BUCKET_S for bucket, busy in state.busy_s.items()
            },
        }
    )


def _json(body: JsonObject) -> web.Response:
    return web.Response(body=json.dumps(body).encode(), content_type="application/json")


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    body = {"error": {"message": message, "type": "mock_error", "code": status}}
    return web.Response(
        status=status,
        body=json.dumps(body).encode(),
        content_type="application/json",
        headers=headers,
    )


if __name__ == "__main__":
    main()
