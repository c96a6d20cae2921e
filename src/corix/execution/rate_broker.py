"""Rate limits that hold across Ray workers: one broker actor keeps each endpoint's budget.

Every worker's client asks the broker for its slot (one small actor call per model call,
only on endpoints with a requests- or tokens-per-minute limit) and sleeps locally for the
wait it is given, so the broker never blocks. The broker keeps the same token buckets as
one process would (:class:`~corix.llm.rate_limit.RateLimiter`), on one clock.

The broker is no single point of failure: when it dies or does not answer within
``BROKER_TIMEOUT_S``, each worker's limiter falls back, for good, to a bucket of its own
holding its even share of the budget (``rpm / workers``), starting empty, and starts
spending it only once every slot the broker promised it has come due. The shares add up
to the budget, so the limit holds; a model call never fails because the broker did.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import Any

from ray.actor import ActorHandle
from ray.exceptions import RayError

from corix.llm import EndpointConfig, Limiter, LimiterFactory, RateLimiter

__all__ = [
    "BROKER_TIMEOUT_S",
    "BrokeredLimiter",
    "RateLimitBroker",
    "brokered_limits",
    "endpoint_key",
]

logger = logging.getLogger(__name__)

BROKER_TIMEOUT_S = 10.0
"""How long a worker waits for the broker's answer before it uses its own share."""


def endpoint_key(endpoint: EndpointConfig) -> str:
    """Which budget a client spends: the same address and model share one."""
    return f"{endpoint.base_url or endpoint.transport}|{endpoint.model}|{endpoint.name}"


class RateLimitBroker:
    """A Ray actor: each endpoint's requests and tokens per minute, for the whole cluster."""

    def __init__(self) -> None:
        self._limiters: dict[str, RateLimiter] = {}

    def pid(self) -> int:
        """The broker's process id (tests kill it)."""
        return os.getpid()

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
    """A client's view of the broker: the :class:`~corix.llm.rate_limit.Limiter` interface,
    falling back to worker ``worker``'s share of ``workers`` when the broker is gone."""

    def __init__(
        self,
        broker: ActorHandle[Any],
        endpoint: EndpointConfig,
        *,
        worker: int = 0,
        workers: int = 1,
        timeout_s: float = BROKER_TIMEOUT_S,
    ) -> None:
        self._broker = broker
        self._key = endpoint_key(endpoint)
        self._rpm = endpoint.requests_per_minute
        self._tpm = endpoint.tokens_per_minute
        self._worker = worker
        self._workers = workers
        self._timeout_s = timeout_s
        self._promised_until = 0.0  # when the last slot the broker gave us comes due
        self._failed = False
        self._own: RateLimiter | None = None

    @property
    def on_own_share(self) -> bool:
        """Whether the broker failed and this limiter now spends its own share."""
        return self._failed

    async def acquire(self, tokens: int) -> None:
        if not self._failed:
            try:
                wait: float = await asyncio.wait_for(
                    self._broker.reserve.remote(self._key, self._rpm, self._tpm, tokens),
                    self._timeout_s,
                )
            except (RayError, TimeoutError) as exc:
                self._fall_back(exc)
            else:
                self._promised_until = max(self._promised_until, time.monotonic() + wait)
                await self._sleep(wait, lambda: self._broker.release.remote(self._key, tokens))
                return
        due = self._promised_until - time.monotonic()
        if due > 0:
            await asyncio.sleep(due)  # the broker's promises first; nothing reserved yet
        own = self._own_share()
        await self._sleep(own.reserve(tokens), lambda: own.release(tokens))

    @staticmethod
    async def _sleep(wait: float, give_back: Callable[[], object]) -> None:
        if wait <= 0:
            return
        try:
            await asyncio.sleep(wait)
        except asyncio.CancelledError:
            give_back()  # never sent: give the slot back
            raise

    def _fall_back(self, exc: BaseException) -> None:
        if not self._failed:
            self._failed = True
            logger.warning(
                "the rate-limit broker failed (%s: %s); worker %d keeps 1/%d of %s's budget",
                type(exc).__name__,
                exc,
                self._worker,
                self._workers,
                self._key,
            )

    def _own_share(self) -> RateLimiter:
        # Made once the broker's last promise is due, empty: it adds no burst to them.
        if self._own is None:
            self._own = RateLimiter(
                None if self._rpm is None else self._rpm / self._workers,
                None if self._tpm is None else self._tpm / self._workers,
                full=False,
            )
        return self._own

    def settle(self, estimated_tokens: int, actual_tokens: int) -> None:
        if self._tpm is None:
            return
        if self._failed:
            self._own_share().settle(estimated_tokens, actual_tokens)
        else:
            self._broker.settle.remote(self._key, estimated_tokens, actual_tokens)


def brokered_limits(
    broker: ActorHandle[Any], *, worker: int = 0, workers: int = 1
) -> LimiterFactory:
    """A limiter factory for :func:`~corix.llm.rate_limit.shared_limits`, for worker
    ``worker`` of ``workers`` (its share if the broker fails)."""

    def limiter(endpoint: EndpointConfig) -> Limiter:
        return BrokeredLimiter(broker, endpoint, worker=worker, workers=workers)

    return limiter
