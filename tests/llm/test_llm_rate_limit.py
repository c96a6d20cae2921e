import asyncio
import random

import pytest

from corix.llm.backoff import retry_delay
from corix.llm.rate_limit import RateLimiter, TokenBucket


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_bucket_spends_its_burst_then_queues_callers_one_slot_each() -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate_per_s=2.0, capacity=2.0, clock=clock)
    # Two calls fit in the full bucket; each later call waits half a second more.
    assert [bucket.reserve(1) for _ in range(5)] == [0.0, 0.0, 0.5, 1.0, 1.5]
    clock.now += 1.5  # the debt of 3 is repaid
    assert bucket.level == pytest.approx(0.0)
    clock.now += 10.0
    assert bucket.level == pytest.approx(2.0)  # refills only up to capacity


def test_a_call_bigger_than_the_bucket_waits_instead_of_blocking_forever() -> None:
    bucket = TokenBucket(rate_per_s=10.0, capacity=10.0, clock=FakeClock())
    assert bucket.reserve(35) == pytest.approx(2.5)


def test_adjust_charges_and_refunds_but_never_overfills() -> None:
    bucket = TokenBucket(rate_per_s=1.0, capacity=10.0, clock=FakeClock())
    bucket.reserve(6)
    bucket.adjust(3)
    assert bucket.level == pytest.approx(1.0)
    bucket.adjust(-100)
    assert bucket.level == pytest.approx(10.0)


def test_request_limit_is_spread_over_the_minute() -> None:
    limiter = RateLimiter(requests_per_minute=120, tokens_per_minute=None, clock=FakeClock())
    # 2 requests per second: a burst of 2, then one every half second.
    assert [limiter.reserve(1000) for _ in range(4)] == [0.0, 0.0, 0.5, 1.0]


def test_slow_request_limit_still_lets_one_request_through() -> None:
    limiter = RateLimiter(requests_per_minute=30, tokens_per_minute=None, clock=FakeClock())
    assert limiter.reserve(1) == 0.0
    assert limiter.reserve(1) == pytest.approx(2.0)


def test_token_limit_is_corrected_by_real_usage() -> None:
    limiter = RateLimiter(requests_per_minute=None, tokens_per_minute=600, clock=FakeClock())
    # 10 tokens per second, bucket of 10.
    assert limiter.reserve(25) == pytest.approx(1.5)
    limiter.settle(estimated_tokens=25, actual_tokens=5)  # 20 tokens refunded
    assert limiter.reserve(10) == pytest.approx(0.5)


def test_the_stricter_limit_sets_the_wait() -> None:
    limiter = RateLimiter(requests_per_minute=60, tokens_per_minute=60, clock=FakeClock())
    assert limiter.reserve(1) == 0.0
    # Next request: 1 s for the request bucket, 4 s for 5 tokens at 1 token/s.
    assert limiter.reserve(5) == pytest.approx(5.0)


async def test_a_cancelled_wait_gives_its_slot_back() -> None:
    clock = FakeClock()
    limiter = RateLimiter(requests_per_minute=60, tokens_per_minute=None, clock=clock)
    await limiter.acquire(1)
    waiter = asyncio.create_task(limiter.acquire(1))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    # Without the refund the next request would wait 2 s.
    assert limiter.reserve(1) == pytest.approx(1.0)


async def test_acquire_without_limits_returns_at_once() -> None:
    limiter = RateLimiter(requests_per_minute=None, tokens_per_minute=None)
    await asyncio.wait_for(limiter.acquire(10**9), timeout=0.1)


@pytest.mark.parametrize(
    ("failures", "low", "high"),
    [(1, 0.5, 1.0), (2, 1.0, 2.0), (3, 2.0, 4.0), (4, 2.5, 5.0), (200, 2.5, 5.0)],
)
def test_backoff_doubles_up_to_the_cap_with_jitter(failures: int, low: float, high: float) -> None:
    rng = random.Random(7)
    delays = [
        retry_delay(failures, base_s=1.0, max_s=5.0, retry_after_s=None, rng=rng)
        for _ in range(200)
    ]
    assert low <= min(delays) < low + 0.1 * (high - low)
    assert high - 0.1 * (high - low) < max(delays) <= high


def test_backoff_honours_retry_after_beyond_the_cap() -> None:
    rng = random.Random(0)
    assert retry_delay(1, base_s=0.1, max_s=1.0, retry_after_s=7.0, rng=rng) == 7.0
    assert retry_delay(5, base_s=1.0, max_s=4.0, retry_after_s=0.0, rng=rng) >= 2.0
