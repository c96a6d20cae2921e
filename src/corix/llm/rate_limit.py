"""Per-endpoint request and token rate limits as token buckets.

A bucket lets a call take its cost at once, even into debt, and makes the call wait
until the debt is repaid. Every waiter so gets its own slot in arrival order with a
single sleep: no lock, no polling, and a call bigger than the bucket still goes through
(it just waits longer). Buckets hold one second's allowance, so a per-minute quota is
spread evenly instead of being spent in a burst at the start of each minute.

Each client takes its limiter from :func:`limiter_for`: an in-process
:class:`RateLimiter`, unless the caller installed another kind with
:func:`shared_limits` (the Ray executor shares one budget per endpoint across workers).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Protocol

from corix.domain import EndpointConfig

Clock = Callable[[], float]
BURST_SECONDS = 1.0


class TokenBucket:
    """Refills at ``rate_per_s`` up to ``capacity``; starts full, or empty."""

    def __init__(
        self,
        rate_per_s: float,
        capacity: float,
        *,
        clock: Clock = time.monotonic,
        full: bool = True,
    ) -> None:
        self._rate = rate_per_s
        self._capacity = capacity
        self._clock = clock
        self._level = capacity if full else 0.0
        self._updated = clock()

    @property
    def level(self) -> float:
        self._refill()
        return self._level

    def reserve(self, cost: float) -> float:
        """Take ``cost`` now and return the seconds to wait before using it."""
        self._refill()
        self._level -= cost
        return 0.0 if self._level >= 0 else -self._level / self._rate

    def adjust(self, extra_cost: float) -> None:
        """Charge (or, if negative, refund) a correction to an earlier reservation."""
        self._refill()
        self._level = min(self._capacity, self._level - extra_cost)

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self._capacity, self._level + (now - self._updated) * self._rate)
        self._updated = now


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits of one endpoint (either optional)."""

    def __init__(
        self,
        requests_per_minute: float | None,
        tokens_per_minute: float | None,
        *,
        clock: Clock = time.monotonic,
        full: bool = True,
    ) -> None:
        """``full=False`` starts with no burst allowance: a limiter that takes over a budget
        another was spending (see :mod:`corix.execution.rate_broker`)."""
        self._requests = _bucket_per_minute(requests_per_minute, clock, 1.0, full)
        self._tokens = _bucket_per_minute(tokens_per_minute, clock, 0.0, full)

    def reserve(self, tokens: int) -> float:
        """Reserve one request of ``tokens`` estimated tokens; return the seconds to wait."""
        wait = 0.0
        if self._requests is not None:
            wait = self._requests.reserve(1)
        if self._tokens is not None:
            wait = max(wait, self._tokens.reserve(tokens))
        return wait

    async def acquire(self, tokens: int) -> None:
        """Wait for a slot for one request of ``tokens`` estimated tokens."""
        wait = self.reserve(tokens)
        if wait <= 0:
            return
        try:
            await asyncio.sleep(wait)
        except asyncio.CancelledError:
            self.release(tokens)  # the request will not be sent: give its slot back
            raise

    def settle(self, estimated_tokens: int, actual_tokens: int) -> None:
        """Correct the token bucket once the real usage of a request is known."""
        if self._tokens is not None:
            self._tokens.adjust(actual_tokens - estimated_tokens)

    def release(self, tokens: int) -> None:
        """Undo a reservation whose request was never sent."""
        if self._requests is not None:
            self._requests.adjust(-1)
        if self._tokens is not None:
            self._tokens.adjust(-tokens)


def _bucket_per_minute(
    per_minute: float | None, clock: Clock, min_capacity: float, full: bool
) -> TokenBucket | None:
    if per_minute is None:
        return None
    rate = per_minute / 60.0
    return TokenBucket(rate, max(min_capacity, rate * BURST_SECONDS), clock=clock, full=full)


class Limiter(Protocol):
    """What a client needs of a rate limiter: a slot per request, and the real usage after."""

    async def acquire(self, tokens: int) -> None: ...

    def settle(self, estimated_tokens: int, actual_tokens: int) -> None: ...


LimiterFactory = Callable[[EndpointConfig], Limiter]

_shared: ContextVar[LimiterFactory | None] = ContextVar("corix_shared_limits", default=None)


def limiter_for(endpoint: EndpointConfig) -> Limiter:
    """The limiter of a client opened now on ``endpoint``."""
    factory = _shared.get()
    if factory is not None and _is_limited(endpoint):
        return factory(endpoint)
    return RateLimiter(endpoint.requests_per_minute, endpoint.tokens_per_minute)


@contextlib.contextmanager
def shared_limits(factory: LimiterFactory) -> Iterator[None]:
    """Clients opened inside this block on a rate-limited endpoint use ``factory``'s limiter."""
    token = _shared.set(factory)
    try:
        yield
    finally:
        _shared.reset(token)


def _is_limited(endpoint: EndpointConfig) -> bool:
    return endpoint.requests_per_minute is not None or endpoint.tokens_per_minute is not None
