"""Adaptive concurrency against mock servers that serve in parallel or one at a time."""

import asyncio

import pytest

from corix.llm import (
    ChatMessage,
    ChatRequest,
    EndpointConfig,
    LLMClient,
    ModelCallError,
    concurrency_share,
)
from corix.llm.concurrency import AdaptiveConcurrency, FixedConcurrency, Outcome
from corix.llm.mock_server import MockServerConfig, running_mock_server
from support.mock_serving import mock_stats


def _endpoint(base_url: str, **changes: object) -> EndpointConfig:
    settings: dict[str, object] = {
        "name": "app",
        "base_url": base_url,
        "model": "app-model",
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.02,
        "timeout_s": 5.0,
    }
    return EndpointConfig.model_validate({**settings, **changes})


def _request(number: int) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content=f"Question {number}")])


async def test_a_server_answering_one_at_a_time_gets_one_request_in_flight() -> None:
    # A user's defaults: an `openai:` endpoint given no concurrency option (start at 2,
    # ceiling 8). One request at a time, 60 ms each.
    config = MockServerConfig(latency_ms=60, one_at_a_time=True)
    async with running_mock_server(config) as base_url:
        endpoint = EndpointConfig(name="app", base_url=base_url, model="app-model")
        async with LLMClient(endpoint) as client:
            limit = client.concurrency
            assert isinstance(limit, AdaptiveConcurrency)
            limits = []

            async def call(number: int) -> None:
                await client.chat(_request(number))
                limits.append(limit.limit)

            await asyncio.gather(*(call(n) for n in range(30)))
        stats = await mock_stats(base_url)
    # Six alone (the reference), six at 2 whose latency doubled: back to 1, held there.
    assert limits[14:] == [1] * 16
    assert limit.cuts == 1
    assert stats["max_in_flight"] == 2
    assert stats["requests"] == 30


async def test_a_server_that_keeps_up_gets_more_at_once() -> None:
    # 150 ms replies: a loaded machine's scheduling jitter (tens of ms) stays under the
    # 1.4× growth the limiter reads as "no gain" (at 60 ms it was cut under load).
    async with running_mock_server(MockServerConfig(latency_ms=150)) as base_url:
        endpoint = _endpoint(base_url, initial_concurrency=2, max_concurrency=16)
        async with LLMClient(endpoint) as client:
            await asyncio.gather(*(client.chat(_request(n)) for n in range(40)))
            limit = client.concurrency
            assert isinstance(limit, AdaptiveConcurrency)
        stats = await mock_stats(base_url)
    # Six alone, then each level measured (six completions or more) before doubling:
    # 2, 4, 8, 16 after 6 + 6 + 8 + 8 = 28 completions; latency flat, so never cut.
    assert limit.peak == 16
    assert limit.cuts == 0
    assert stats["max_in_flight"] > 8


async def test_fixed_concurrency_keeps_the_bound() -> None:
    async with running_mock_server(MockServerConfig(latency_ms=30)) as base_url:
        endpoint = _endpoint(base_url, max_concurrency=6, adaptive_concurrency=False)
        async with LLMClient(endpoint) as client:
            await asyncio.gather(*(client.chat(_request(n)) for n in range(30)))
            assert client.concurrency.limit == 6
        stats = await mock_stats(base_url)
    assert stats["max_in_flight"] == 6


async def test_abandoned_requests_are_closed_on_the_server() -> None:
    config = MockServerConfig(fail_timeout=1.0, hang_s=30.0)
    async with running_mock_server(config) as base_url:
        endpoint = _endpoint(base_url, initial_concurrency=1, timeout_s=0.2, max_retries=0)
        async with LLMClient(endpoint) as client:
            results = await asyncio.gather(
                *(client.chat(_request(n)) for n in range(3)), return_exceptions=True
            )
        await asyncio.sleep(0.1)
        stats = await mock_stats(base_url)
    assert all(isinstance(result, ModelCallError) for result in results)
    # The client closed each abandoned request; the server cancelled its handler.
    assert stats["in_flight"] == 0


async def test_timeouts_halve_the_limit_once_per_round() -> None:
    limit = AdaptiveConcurrency(initial=8, ceiling=100)
    await _round(limit, latency_s=1.0, count=6)  # measured alone first
    assert limit.limit == 8

    async def overloaded() -> None:
        async with limit.slot() as slot:
            await asyncio.sleep(0)
            slot.overloaded()

    await asyncio.gather(*(overloaded() for _ in range(8)))
    # Eight timeouts of one round are one signal: 8 → 4, not 8 → 1.
    assert (limit.limit, limit.cuts) == (4, 1)


async def test_a_level_that_buys_no_throughput_is_left_and_held() -> None:
    limit = AdaptiveConcurrency(initial=4, ceiling=100)
    await _round(limit, latency_s=1.0, count=6)
    for _ in range(2):
        await _round(limit, latency_s=1.0, saturated=True)  # 8 at 4: as fast as alone
    assert (limit.limit, limit.cuts) == (8, 0)  # measured, latency held: doubled
    await _round(limit, latency_s=1.3, saturated=True)  # 1.3×: within the jitter allowed
    assert (limit.limit, limit.cuts) == (16, 0)
    await _round(limit, latency_s=2.0, saturated=True)  # 2× at 4× the level: queueing
    # Back to the level serving the most per second (8 / 1.3 s beats 4 / 1 s), held there.
    assert (limit.limit, limit.cuts) == (8, 1)
    for _ in range(3):
        await _round(limit, latency_s=1.3, saturated=True)
    assert limit.limit == 8


async def test_a_cancelled_waiter_gives_no_slot_away() -> None:
    limit = FixedConcurrency(1)
    async with limit.slot():
        waiter = asyncio.create_task(_hold(limit))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
    async with asyncio.timeout(1):
        async with limit.slot():
            pass


async def _hold(limit: FixedConcurrency) -> None:
    async with limit.slot():
        await asyncio.sleep(10)


async def _round(
    limit: AdaptiveConcurrency, *, latency_s: float, saturated: bool = False, count: int = 0
) -> None:
    """A round of completions at ``latency_s`` (100 generated tokens each): all at once
    when ``saturated``, else ``count`` (or the limit's) one after another."""

    async def one() -> None:
        async with limit.slot() as slot:
            await asyncio.sleep(0)
            slot.succeeded(Outcome(latency_s, completion_tokens=100))

    if saturated:
        await asyncio.gather(*(one() for _ in range(limit.limit)))
    else:
        for _ in range(count or limit.limit):
            await one()


def test_workers_of_a_cluster_share_an_endpoints_bound() -> None:
    endpoint = EndpointConfig(
        transport="mock", model="m", max_concurrency=5, adaptive_concurrency=False
    )
    limits = []
    for worker in range(2):
        with concurrency_share(worker, 2):
            limits.append(LLMClient(endpoint).concurrency.limit)
    assert limits == [3, 2]  # together the endpoint's 5, never 5 each
    assert LLMClient(endpoint).concurrency.limit == 5  # one process holds it all
    with concurrency_share(2, 3):
        scarce = LLMClient(endpoint.model_copy(update={"max_concurrency": 2}))
    assert scarce.concurrency.limit == 1  # a worker keeps one, or it could never call


def test_an_adaptive_endpoint_grows_only_to_the_workers_share() -> None:
    endpoint = EndpointConfig(transport="mock", model="m", max_concurrency=8, initial_concurrency=6)
    with concurrency_share(0, 4):
        client = LLMClient(endpoint)
    limit = client.concurrency
    assert isinstance(limit, AdaptiveConcurrency)
    assert limit.peak == 2  # started at its share of 8, below the asked 6
