"""Rate limits that hold across Ray workers: one broker actor keeps each endpoint's budget.

Every worker's client asks the broker for its slot (one small actor call per model call,
only on endpoints with a requests- or tokens-per-minute limit) and sleeps locally for the
wait it is given, so the broker never blocks. The broker keeps the same token buckets as
one process would (:class:`~corix.llm.rate_limit.RateLimiter`), on one clock.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ray.actor import ActorHandle

from corix.llm import EndpointConfig, Limiter, LimiterFactory, RateLimiter

__all__ = ["BrokeredLimiter", "RateLimitBroker", "brokered_limits", "endpoint_key"]


def endpoint_key(endpoint: EndpointConfig) -> str:
    """Which budget a client spends: the same address and model share one."""
    return f"{endpoint.base_url or endpoint.transport}|{endpoint.model}|{endpoint.name}"


class RateLimitBroker:
    """A Ray actor: each endpoint's requests and tokens per minute, for the whole cluster."""

    def __init__(self) -> None:
        self._limiters: dict[str, RateLimiter] = {}

    def reserve(self, key: str, rpm: float | None, tpm: float | None, tokens: int) -> float:
        """Take a slot for one request; return the seconds the caller waits before sending."""
        limiter = self._limiters.get(key)
        if limiter is None:
            limiter = self._limiters[key] = RateLimiter(rpm, tpm)
        return limiter.reserve(tokens)

    def settle(self, key: str, estimated_tokens: int, actual_tokens: int) -> None:
        self._limiters[key].settle(estimated_tokens, actual_tokens)

    def release(self, key: str, tokens: int) -> None:
        self._limiters[key].release(tokens)


class BrokeredLimiter:
    """A client's view of the broker: the :class:`~corix.llm.rate_limit.Limiter` interface."""

    def __init__(self, broker: ActorHandle[Any], endpoint: EndpointConfig) -> None:
        self._broker = broker
        self._key = endpoint_key(endpoint)
        self._rpm = endpoint.requests_per_minute
        self._tpm = endpoint.tokens_per_minute

    async def acquire(self, tokens: int) -> None:
        wait: float = await self._broker.reserve.remote(self._key, self._rpm, self._tpm, tokens)
        if wait <= 0:
            return
        try:
            await asyncio.sleep(wait)
        except asyncio.CancelledError:
            self._broker.release.remote(self._key, tokens)  # never sent: give the slot back
            raise

    def settle(self, estimated_tokens: int, actual_tokens: int) -> None:
        if self._tpm is not None:
            self._broker.settle.remote(self._key, estimated_tokens, actual_tokens)


def brokered_limits(broker: ActorHandle[Any]) -> LimiterFactory:
    """A limiter factory for :func:`~corix.llm.rate_limit.shared_limits`."""

    def limiter(endpoint: EndpointConfig) -> Limiter:
        return BrokeredLimiter(broker, endpoint)

    return limiter
