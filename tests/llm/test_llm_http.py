"""The client against the built-in mock server over real HTTP on the loopback."""

import asyncio
import time
from email.utils import formatdate

import pytest

from corix.llm import ChatMessage, ChatRequest, EndpointConfig, LLMClient, ModelCallError
from corix.llm.call_errors import is_retryable_status
from corix.llm.http_transport import parse_retry_after
from corix.llm.mock_server import MockServerConfig, running_mock_server
from support.mock_serving import mock_stats


def _endpoint(base_url: str, **changes: object) -> EndpointConfig:
    settings: dict[str, object] = {
        "name": "app",
        "base_url": base_url,
        "model": "app-model",
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.02,
        "max_retries": 2,
        "timeout_s": 5.0,
    }
    return EndpointConfig.model_validate({**settings, **changes})


def _request(number: int = 0) -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage(role="user", content=f"Question {number}")], seed=number
    )


async def test_a_call_returns_the_mock_reply_with_usage() -> None:
    async with running_mock_server() as base_url, LLMClient(_endpoint(base_url)) as client:
        response = await client.chat(_request(7))
    assert response.text.endswith("to: Question 7")
    assert response.model == "app-model"
    # "Question 7": 4 framing + 10/4 → 7; "Mock reply xxxxxx to: Question 7": 32/4 → 8.
    assert (response.prompt_tokens, response.completion_tokens) == (7, 8)
    assert response.attempts == 1
    assert response.latency_ms > 0


async def test_429_waits_for_retry_after() -> None:
    config = MockServerConfig(fail_429=0.5, retry_after_s=0.6)
    async with running_mock_server(config) as base_url, LLMClient(_endpoint(base_url)) as client:
        started = time.perf_counter()
        response = await client.chat(_request())
        elapsed = time.perf_counter() - started
        stats = await mock_stats(base_url)
    assert response.attempts == 2
    assert stats["faults"]["429"] == 1
    # The backoff alone would have waited at most 0.02 s.
    assert 0.6 <= elapsed < 1.5


async def test_a_retry_after_beyond_the_cap_fails_at_once() -> None:
    # The server asks for an hour; corix must not freeze a run waiting for it.
    config = MockServerConfig(fail_429=1.0, retry_after_s=3600)
    async with running_mock_server(config) as base_url:
        endpoint = _endpoint(base_url, retry_after_max_s=1.0)
        async with LLMClient(endpoint) as client:
            started = time.perf_counter()
            with pytest.raises(ModelCallError, match="asked to wait 3600 s") as caught:
                await client.chat(_request())
            elapsed = time.perf_counter() - started
    assert elapsed < 1.0 and caught.value.attempts == 1
    assert client.usage.snapshot().total.errors == 1


async def test_a_call_deadline_bounds_every_retry_and_waits_are_counted() -> None:
    config = MockServerConfig(fail_500=1.0)
    async with running_mock_server(config) as base_url:
        endpoint = _endpoint(
            base_url, max_retries=50, backoff_base_s=0.1, backoff_max_s=0.1, call_deadline_s=0.5
        )
        async with LLMClient(endpoint) as client:
            started = time.perf_counter()
            with pytest.raises(ModelCallError, match=r"call deadline of 0\.5 s"):
                await client.chat(_request())
            elapsed = time.perf_counter() - started
    assert elapsed < 1.0
    waited = client.usage.snapshot().total.waited_s
    assert 0.05 <= waited <= 0.5


async def test_500_is_retried_then_succeeds() -> None:
    config = MockServerConfig(fail_500=0.5)
    async with running_mock_server(config) as base_url, LLMClient(_endpoint(base_url)) as client:
        response = await client.chat(_request())
        stats = await mock_stats(base_url)
    assert response.attempts == 2
    assert stats["faults"]["500"] == 1
    assert client.usage.snapshot().total.retries == 1


async def test_malformed_json_is_retried_then_succeeds() -> None:
    config = MockServerConfig(fail_malformed=0.5)
    async with running_mock_server(config) as base_url, LLMClient(_endpoint(base_url)) as client:
        response = await client.chat(_request())
        stats = await mock_stats(base_url)
    assert response.attempts == 2
    assert stats["faults"]["malformed"] == 1


async def test_timeouts_give_up_after_max_retries() -> None:
    config = MockServerConfig(fail_timeout=1.0, hang_s=30.0)
    endpoint_changes = {"timeout_s": 0.2, "max_retries": 2}
    async with running_mock_server(config) as base_url:
        async with LLMClient(_endpoint(base_url, **endpoint_changes)) as client:
            started = time.perf_counter()
            with pytest.raises(ModelCallError, match=r"no reply within 0\.2 s") as raised:
                await client.chat(_request())
            elapsed = time.perf_counter() - started
        stats = await mock_stats(base_url)
    assert raised.value.attempts == 3
    assert stats["requests"] == 3
    assert 0.6 <= elapsed < 2.0
    assert client.usage.snapshot().total.errors == 1


async def test_client_errors_other_than_408_and_429_are_not_retried() -> None:
    async with running_mock_server() as base_url:
        async with LLMClient(_endpoint(base_url + "/missing")) as client:
            with pytest.raises(ModelCallError) as raised:
                await client.chat(_request())
        stats = await mock_stats(base_url)
    assert (raised.value.status, raised.value.attempts) == (404, 1)
    assert stats["requests"] == 0


async def test_connection_errors_are_retried() -> None:
    async with running_mock_server() as base_url:
        pass  # the port is free again once the server stopped
    async with LLMClient(_endpoint(base_url, max_retries=1)) as client:
        with pytest.raises(ModelCallError, match="connection error") as raised:
            await client.chat(_request())
    assert raised.value.attempts == 2


async def test_a_missing_api_key_fails_before_sending(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CORIX_TEST_MISSING_KEY", raising=False)
    async with running_mock_server() as base_url:
        endpoint = _endpoint(base_url, key_env="CORIX_TEST_MISSING_KEY")
        async with LLMClient(endpoint) as client:
            with pytest.raises(ModelCallError, match="CORIX_TEST_MISSING_KEY") as raised:
                await client.chat(_request())
        stats = await mock_stats(base_url)
    assert raised.value.attempts == 1
    assert stats["requests"] == 0


async def test_the_request_rate_limit_spaces_requests() -> None:
    # 600 per minute: a burst of 10, then one request every 0.1 s.
    async with running_mock_server() as base_url:
        async with LLMClient(_endpoint(base_url, requests_per_minute=600)) as client:
            started = time.perf_counter()
            await asyncio.gather(*(client.chat(_request(n)) for n in range(15)))
            limited = time.perf_counter() - started
        async with LLMClient(_endpoint(base_url)) as client:
            started = time.perf_counter()
            await asyncio.gather(*(client.chat(_request(n)) for n in range(15)))
            unlimited = time.perf_counter() - started
    assert limited >= 0.45
    assert unlimited < 0.3


async def test_concurrency_never_exceeds_the_bound() -> None:
    async with running_mock_server(MockServerConfig(latency_ms=30)) as base_url:
        async with LLMClient(_endpoint(base_url, max_concurrency=4)) as client:
            await asyncio.gather(*(client.chat(_request(n)) for n in range(24)))
        stats = await mock_stats(base_url)
    assert stats["requests"] == 24
    assert stats["max_in_flight"] == 4


@pytest.mark.parametrize(
    ("status", "retryable"),
    [(400, False), (401, False), (404, False), (408, True), (429, True), (500, True), (503, True)],
)
def test_which_statuses_are_retried(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    in_ten_seconds = formatdate(time.time() + 10, usegmt=True)
    assert 8.0 < (parse_retry_after(in_ten_seconds) or 0.0) <= 10.0
