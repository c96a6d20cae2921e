"""Structured output that negotiates, errors classified, truncation reported: against the
mock server behaving like llama-cpp-python's (refuses json_schema, one request at a time)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from corix.assessment.annotation_run import AnnotateOptions, annotate_run_async
from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.llm import ChatMessage, ChatRequest, EndpointConfig, LLMClient, ModelCallError
from corix.llm.call_errors import TransportError, is_deterministic_refusal
from corix.llm.http_transport import request_headers
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.llm.openai_reply import parse_completion
from corix.llm.transport import RawCompletion, cached_tokens
from corix.storage import Database, iter_sessions, load_passes, run_totals
from support.mock_serving import mock_stats

SCHEMA = {
    "type": "object",
    "properties": {"severity": {"type": "integer", "minimum": 1, "maximum": 5}},
    "required": ["severity"],
    "additionalProperties": False,
}
LLAMA_LIKE = MockServerConfig(refuse_json_schema=True, one_at_a_time=True)


def _endpoint(base_url: str, **changes: object) -> EndpointConfig:
    settings = {"name": "local", "base_url": base_url, "model": "small", "backoff_base_s": 0.01}
    return EndpointConfig.model_validate({**settings, **changes})


def _judge_request(n: int = 0) -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage(role="user", content=f"Judge dialogue {n}.")],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "judgement", "strict": True, "schema": SCHEMA},
        },
    )


async def test_a_refused_json_schema_steps_down_once_and_is_remembered() -> None:
    async with running_mock_server(LLAMA_LIKE) as base_url:
        async with LLMClient(_endpoint(base_url)) as client:
            first = await client.chat(_judge_request(1))
            second = await client.chat(_judge_request(2))
        requests = (await mock_stats(base_url))["requests"]
    # One refused request, then json_object with the schema in the prompt, from then on.
    assert requests == 3
    assert first.structured_output == second.structured_output == "json_object"
    assert client.structured_mode == "json_object"
    assert 1 <= json.loads(first.text)["severity"] <= 5
    assert first.finish_reason == "stop"


@pytest.mark.parametrize("mode", ["json_object", "prompt"])
async def test_a_chosen_mode_is_used_from_the_first_request(mode: str) -> None:
    async with running_mock_server(LLAMA_LIKE) as base_url:
        async with LLMClient(_endpoint(base_url, structured_output=mode)) as client:
            reply = await client.chat(_judge_request())
        assert (await mock_stats(base_url))["requests"] == 1
    assert reply.structured_output == mode and "severity" in json.loads(reply.text)


async def test_a_fixed_json_schema_mode_fails_fast_with_the_servers_message() -> None:
    async with running_mock_server(LLAMA_LIKE) as base_url:
        endpoint = _endpoint(base_url, structured_output="json_schema", max_retries=4)
        async with LLMClient(endpoint) as client:
            with pytest.raises(
                ModelCallError, match="Input should be 'text' or 'json_object'"
            ) as e:
                await client.chat(_judge_request())
        # A deterministic refusal is not retried identically.
        assert e.value.attempts == 1 and (await mock_stats(base_url))["requests"] == 1


def test_deterministic_refusals_are_told_from_transient_failures() -> None:
    assert is_deterministic_refusal("1 validation error for CreateChatCompletionRequest")
    assert is_deterministic_refusal("Requested tokens (5000) exceed context window of 4096")
    assert not is_deterministic_refusal("injected server error")
    assert not is_deterministic_refusal("upstream connect error or disconnect/reset")


async def test_a_reply_cut_at_max_tokens_says_so() -> None:
    async with running_mock_server() as base_url, LLMClient(_endpoint(base_url)) as client:
        request = ChatRequest(
            messages=[ChatMessage(role="user", content="Tell me a long story " * 20)],
            max_tokens=5,
        )
        reply = await client.chat(request)
    assert reply.finish_reason == "length" and len(reply.text) <= 20


async def test_one_request_at_a_time_queues_the_rest() -> None:
    config = MockServerConfig(one_at_a_time=True, latency_ms=50)
    async with running_mock_server(config) as base_url, LLMClient(_endpoint(base_url)) as client:
        started = time.perf_counter()
        await asyncio.gather(*(client.chat(_judge_request(n)) for n in range(4)))
        elapsed = time.perf_counter() - started
    # Four sent together take four latencies, not one: the server answers them in turn.
    assert elapsed >= 4 * 0.05


async def test_a_run_and_its_annotation_work_against_a_llama_like_server(
    sqlite_db: Database,
) -> None:
    async with running_mock_server(LLAMA_LIKE) as base_url:
        spec = f"openai:{base_url}?model=small&max_tokens=6"
        plan = Plan(
            name="local",
            applications=[ApplicationEntry(name="small", spec=spec)],
            scenarios=["tv_spoilers"],
            levels={Level.MODEL_TESTING: LevelSettings(repeats=1)},
            concurrency=4,
        )
        run_id = (await execute_plan(plan, sqlite_db)).run_id
        endpoint = _endpoint(base_url)
        async with LLMClient(endpoint) as client:
            summary = await annotate_run_async(
                sqlite_db,
                run_id,
                "llm",
                options=AnnotateOptions(categories=("risk_assessment",)),
                client=client,
            )
    assert summary.passes_stored > 0 and summary.passes_failed == 0
    passes = load_passes(sqlite_db, run_id=run_id)
    assert {p.provenance["details"]["structured_output"] for p in passes} == {"json_object"}
    metas = [turn.meta for session in iter_sessions(sqlite_db, run_id) for turn in session.turns]
    assert len(metas) == run_totals(sqlite_db, run_id).turns  # every session finished
    # Six tokens cut every reply, and each turn says so.
    assert metas and all(meta.get("finish_reason") == "length" for meta in metas)


def test_an_azure_style_key_goes_in_its_own_header(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_KEY", "s3cret")
    azure = _endpoint("https://x.example/v1", key_env="AZURE_KEY", key_header="api-key")
    assert request_headers(azure)["api-key"] == "s3cret" and "Authorization" not in request_headers(
        azure
    )
    plain = _endpoint("https://x.example/v1", key_env="AZURE_KEY")
    assert request_headers(plain)["Authorization"] == "Bearer s3cret"


async def test_prices_and_max_tokens_from_a_spec_reach_the_run_summary(
    sqlite_db: Database,
) -> None:
    async with running_mock_server() as base_url:
        spec = (
            f"openai:{base_url}?model=small&max_tokens=50"
            "&price_per_1k_prompt=1.0&price_per_1k_completion=2.0&requests_per_minute=6000"
        )
        plan = Plan(
            name="priced",
            applications=[ApplicationEntry(name="small", spec=spec)],
            scenarios=["tv_spoilers"],
            levels={Level.MODEL_TESTING: LevelSettings(repeats=1)},
            concurrency=4,
        )
        result = await execute_plan(plan, sqlite_db)
    stats = result.stats
    # Every call is priced: cost = (prompt × 1.0 + completion × 2.0) / 1000.
    expected = (stats.prompt_tokens * 1.0 + stats.completion_tokens * 2.0) / 1000
    assert stats.usage.cost == pytest.approx(expected, rel=1e-3) and stats.usage.cost > 0


class _LlamaLikeTransport:
    """Refuses json_schema as llama-cpp-python's server does; records what each request asked."""

    def __init__(self) -> None:
        self.formats: list[dict[str, Any] | None] = []

    async def send(
        self, request: ChatRequest, endpoint: EndpointConfig, timeout: float
    ) -> RawCompletion:
        self.formats.append(request.response_format)
        await asyncio.sleep(0.01)  # the others queue for the one slot meanwhile
        if (request.response_format or {}).get("type") == "json_schema":
            raise TransportError.from_status(500, "response_format: 'text' or 'json_object'")
        return RawCompletion(
            text='{"severity": 3}', model="small", prompt_tokens=1, completion_tokens=1
        )

    async def aclose(self) -> None:
        return None


async def test_calls_waiting_for_a_slot_send_in_the_mode_a_refusal_stepped_down_to() -> None:
    transport = _LlamaLikeTransport()
    endpoint = _endpoint("http://unused/v1", max_concurrency=1, adaptive_concurrency=False)
    async with LLMClient(endpoint, transport=transport) as client:
        replies = await asyncio.gather(*(client.chat(_judge_request(n)) for n in range(4)))
    types = [(f or {}).get("type") for f in transport.formats]
    # One refusal, then four requests in json_object: none queued with the old mode.
    assert types == ["json_schema"] + ["json_object"] * 4
    assert {r.structured_output for r in replies} == {"json_object"}


async def test_json_object_carries_the_schema_for_servers_that_constrain_to_it() -> None:
    transport = _LlamaLikeTransport()
    async with LLMClient(_endpoint("http://unused/v1"), transport=transport) as client:
        await client.chat(_judge_request())
    sent = transport.formats[-1]
    assert sent is not None and sent["type"] == "json_object"
    # Spelled as llama.cpp's grammar holds it: the 1..5 range as an enum.
    assert sent["schema"]["properties"]["severity"] == {"enum": [1, 2, 3, 4, 5]}


def test_cached_prompt_tokens_are_read_where_a_server_reports_them() -> None:
    body = {
        "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": 3000,
            "completion_tokens": 2,
            "prompt_tokens_details": {"cached_tokens": 2800},
        },
    }
    request = _judge_request()
    assert parse_completion(json.dumps(body).encode(), request).cached_prompt_tokens == 2800
    assert cached_tokens({"prompt_tokens_details": {"cached_tokens": True}}) is None
    assert cached_tokens({"prompt_tokens": 5}) is None
