"""An attempt's timeout follows the latencies its endpoint shows (issue 35, item 10): a
server that answers one request at a time is slow, not gone."""

from __future__ import annotations

import asyncio
import random

from corix.llm import ChatMessage, ChatRequest, EndpointConfig, LLMClient
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.llm.timeouts import MIN_SAMPLES, WINDOW, AdaptiveTimeout, p95

UNUSED = "http://127.0.0.1:9"  # never called: only the settings are read


def test_p95_is_the_nearest_rank() -> None:
    # 20 values 1..20: rank ceil(0.95 * 20) = 19; 21 values: rank ceil(19.95) = 20.
    assert p95([float(v) for v in range(20, 0, -1)]) == 19.0
    assert p95([float(v) for v in range(1, 22)]) == 20.0
    assert p95([3.0]) == 3.0


def test_the_timeout_is_the_floor_until_enough_replies_then_four_p95s() -> None:
    timeouts = AdaptiveTimeout(EndpointConfig(name="e", base_url=UNUSED, model="m", timeout_s=10.0))
    assert (timeouts.timeout_s, timeouts.deadline_s) == (10.0, 180.0)
    for latency in (1.0, 2.0, 3.0, 4.0):
        timeouts.observe(latency)
    assert timeouts.timeout_s == 10.0  # four replies: too few to judge the endpoint by
    timeouts.observe(5.0)
    assert timeouts.timeout_s == 20.0  # 4 × p95 (5 s) = 20 s > the 10 s floor
    assert timeouts.deadline_s == 360.0  # as many attempts as 180 s held of 10 s ones
    timeouts.observe(30.0)  # p95 of 6 replies: the 6th smallest
    assert timeouts.timeout_s == 120.0 and timeouts.deadline_s == 2160.0


def test_the_timeout_follows_the_latest_window_of_replies_only() -> None:
    timeouts = AdaptiveTimeout(EndpointConfig(name="e", base_url=UNUSED, model="m", timeout_s=1.0))
    rng = random.Random(7)
    seen: list[float] = []
    for _ in range(3 * WINDOW):  # repeated values too: a window may hold one latency twice
        seen.append(rng.choice([0.1, 0.5, 2.0, 2.0, rng.uniform(0.1, 9.0)]))
        timeouts.observe(seen[-1])
        if len(seen) >= MIN_SAMPLES:
            assert timeouts.timeout_s == max(1.0, 4 * p95(seen[-WINDOW:]))


def test_fast_replies_never_lower_the_declared_timeout() -> None:
    timeouts = AdaptiveTimeout(
        EndpointConfig(name="e", base_url=UNUSED, model="m", timeout_s=60.0, call_deadline_s=None)
    )
    for _ in range(MIN_SAMPLES * 2):
        timeouts.observe(0.01)
    assert timeouts.timeout_s == 60.0 and timeouts.deadline_s is None


def _request(number: int) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content=f"Q{number}")], seed=number)


async def test_a_serialized_server_is_waited_for_once_its_latency_is_known() -> None:
    """One request at a time, 200 ms each; the declared timeout is 300 ms. Of two sent at
    once, the second waits in the server's queue: ~400 ms, past the declared timeout, and
    it failed with it. After five replies the timeout is 4 × 200 ms."""
    config = MockServerConfig(latency_ms=200, one_at_a_time=True)
    async with running_mock_server(config) as url:
        endpoint = EndpointConfig(
            name="serial", base_url=url, model="m", timeout_s=0.3, max_retries=0,
            adaptive_concurrency=False, max_concurrency=2,
        )  # fmt: skip
        async with LLMClient(endpoint) as client:
            for number in range(MIN_SAMPLES):
                await client.chat(_request(number))
            assert client.timeouts.timeout_s >= 0.8
            # Both answered: a timeout would have raised ModelCallError (no retries).
            burst = await asyncio.gather(*(client.chat(_request(10 + n)) for n in range(2)))
    assert max(reply.latency_ms for reply in burst) > 300  # the declared timeout would cut it
