from pathlib import Path

import pytest

from corix.llm import (
    ChatMessage,
    ChatRequest,
    EndpointConfig,
    LLMClient,
    MockModel,
    ModelCallError,
    ResponseCache,
    ScriptedTransport,
    TransportError,
)
from corix.llm.tokens import estimate_prompt_tokens, estimate_tokens
from corix.llm.transport import RawCompletion
from corix.llm.usage import UsageLedger


def _endpoint(**changes: object) -> EndpointConfig:
    settings: dict[str, object] = {
        "name": "judge",
        "transport": "mock",
        "model": "judge-model",
        "backoff_base_s": 0.001,
        "backoff_max_s": 0.002,
        "max_retries": 2,
    }
    return EndpointConfig.model_validate({**settings, **changes})


def _request(text: str = "Rate this answer.", **params: object) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content=text)], **params)


def _retryable(reason: str = "HTTP 503") -> TransportError:
    return TransportError(reason, retryable=True, status=503)


async def test_identical_request_is_served_from_the_cache(tmp_path: Path) -> None:
    transport = ScriptedTransport()
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        client = LLMClient(_endpoint(), transport=transport, cache=cache)
        first = await client.chat(_request(seed=1))
        second = await client.chat(_request(seed=1))
        other_seed = await client.chat(_request(seed=2))

    assert len(transport.requests) == 2  # the repeat never reached the transport
    assert (first.cached, first.attempts) == (False, 1)
    assert (second.cached, second.attempts) == (True, 0)
    assert second.text == first.text
    assert (second.prompt_tokens, second.completion_tokens) == (
        first.prompt_tokens,
        first.completion_tokens,
    )
    assert not other_seed.cached
    usage = client.usage.snapshot().endpoints["judge"]
    assert (usage.calls, usage.cache_hits) == (3, 1)
    # Tokens count what was spent: the cached reply cost nothing.
    assert usage.prompt_tokens == first.prompt_tokens + other_seed.prompt_tokens


async def test_cache_survives_a_new_client(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        await LLMClient(_endpoint(), cache=cache).chat(_request())
        again = await LLMClient(_endpoint(), cache=cache).chat(_request())
    assert again.cached


async def test_failed_calls_are_not_cached(tmp_path: Path) -> None:
    failing = ScriptedTransport(failures=[_retryable()] * 3)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        with pytest.raises(ModelCallError):
            await LLMClient(_endpoint(), transport=failing, cache=cache).chat(_request())
        assert len(cache) == 0
        retried = await LLMClient(_endpoint(), transport=failing, cache=cache).chat(_request())
    assert not retried.cached


async def test_the_endpoint_default_model_fills_an_empty_model() -> None:
    transport = ScriptedTransport()
    response = await LLMClient(_endpoint(), transport=transport).chat(_request())
    assert transport.requests[0].model == "judge-model"
    assert response.model == "judge-model"


async def test_an_explicit_model_is_kept() -> None:
    transport = ScriptedTransport()
    await LLMClient(_endpoint(), transport=transport).chat(_request(model="other"))
    assert transport.requests[0].model == "other"


async def test_tokens_and_cost_are_accounted() -> None:
    endpoint = _endpoint(price_per_1k_prompt=2.0, price_per_1k_completion=10.0)
    client = LLMClient(endpoint, transport=ScriptedTransport(MockModel(["x" * 400])))
    request = _request("y" * 40)
    response = await client.chat(request)

    # 4 tokens of message framing + 40/4 for the text; 400/4 for the reply.
    assert response.prompt_tokens == estimate_prompt_tokens(request) == 14
    assert response.completion_tokens == estimate_tokens("x" * 400) == 100
    usage = client.usage.snapshot().total
    assert usage.cost == pytest.approx((14 * 2.0 + 100 * 10.0) / 1000)


async def test_retryable_failures_are_retried_and_counted() -> None:
    transport = ScriptedTransport(failures=[_retryable(), _retryable()])
    client = LLMClient(_endpoint(max_retries=2), transport=transport)
    response = await client.chat(_request())
    assert response.attempts == 3
    assert len(transport.requests) == 3
    usage = client.usage.snapshot().total
    assert (usage.calls, usage.retries, usage.errors) == (1, 2, 0)


async def test_retries_are_capped() -> None:
    transport = ScriptedTransport(failures=[_retryable("HTTP 503: busy")] * 5)
    client = LLMClient(_endpoint(max_retries=2), transport=transport)
    with pytest.raises(ModelCallError) as raised:
        await client.chat(_request())
    assert raised.value.attempts == 3
    assert raised.value.reason == "HTTP 503: busy"
    assert raised.value.status == 503
    assert "after 3 attempt(s)" in str(raised.value)
    usage = client.usage.snapshot().total
    assert (usage.calls, usage.retries, usage.errors, usage.prompt_tokens) == (1, 2, 1, 0)


async def test_non_retryable_failures_fail_at_once() -> None:
    bad_request = TransportError.from_status(400, "bad schema")
    transport = ScriptedTransport(failures=[bad_request])
    with pytest.raises(ModelCallError) as raised:
        await LLMClient(_endpoint(), transport=transport).chat(_request())
    assert raised.value.attempts == 1
    assert raised.value.reason == "HTTP 400: bad schema"
    assert len(transport.requests) == 1


async def test_a_slow_reply_times_out_and_is_retried() -> None:
    transport = ScriptedTransport(latency_s=5.0)
    client = LLMClient(_endpoint(timeout_s=0.05, max_retries=1), transport=transport)
    with pytest.raises(ModelCallError, match=r"no reply within 0\.05 s") as raised:
        await client.chat(_request())
    assert raised.value.attempts == 2


async def test_a_shared_ledger_keeps_endpoints_apart() -> None:
    ledger = UsageLedger()
    judge = LLMClient(_endpoint(), usage=ledger)
    user = LLMClient(_endpoint(name="user-sim", max_retries=0), usage=ledger)
    await judge.chat(_request("a"))
    await judge.chat(_request("b"))
    await user.chat(_request("c"))

    snapshot = ledger.snapshot()
    assert sorted(snapshot.endpoints) == ["judge", "user-sim"]
    assert snapshot.endpoints["judge"].calls == 2
    assert snapshot.endpoints["user-sim"].calls == 1
    assert snapshot.total.calls == 3
    assert snapshot.total.prompt_tokens == sum(e.prompt_tokens for e in snapshot.endpoints.values())


def test_every_count_the_ledger_reports_is_counted() -> None:
    ledger = UsageLedger()
    endpoint = _endpoint(price_per_1k_prompt=1.0, price_per_1k_completion=2.0)
    ledger.record_cache_hit(endpoint)
    ledger.record_success(endpoint, RawCompletion("ok", "m", 1000, 500), retries=1)
    ledger.record_failure(endpoint, retries=2)
    ledger.record_wait(endpoint, 0.25)

    counted = ledger.snapshot().endpoints["judge"].model_dump()
    # A count added to EndpointUsage but not to the ledger's tally would stay at 0 here.
    assert counted == {
        "calls": 3,
        "cache_hits": 1,
        "retries": 3,
        "errors": 1,
        "prompt_tokens": 1000,
        "completion_tokens": 500,
        "cost": 2.0,
        "waited_s": 0.25,
    }
    assert ledger.snapshot().total.model_dump() == counted


async def test_mock_endpoints_answer_offline_through_the_context_manager() -> None:
    async with LLMClient(_endpoint()) as client:
        response = await client.chat(_request("Hello there"))
    assert response.text.endswith("to: Hello there")


def test_openai_endpoints_need_an_address() -> None:
    with pytest.raises(ValueError, match="base_url is required"):
        EndpointConfig(name="x", model="m")
    endpoint = EndpointConfig(name="x", model="m", base_url="http://h/v1/")
    assert endpoint.base_url == "http://h/v1"
