"""Token, cost and reliability accounting per endpoint, shared by every client of a run."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from corix.domain import EndpointConfig
from corix.llm.transport import RawCompletion


class EndpointUsage(BaseModel):
    """What the calls to one endpoint (or to all of them, for the total) added up to.

    ``calls`` counts calls made by callers, including ``cache_hits`` and ``errors``
    (calls that gave up); ``retries`` counts extra attempts. Tokens and cost are those
    actually spent: replies from the cache cost nothing. Endpoints without prices add
    no cost.
    """

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    waited_s: float = 0.0
    """Time spent backing off before retries (the summary's "waiting")."""

    def add(self, other: EndpointUsage) -> None:
        self.calls += other.calls
        self.cache_hits += other.cache_hits
        self.retries += other.retries
        self.errors += other.errors
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost += other.cost
        self.waited_s += other.waited_s


class UsageSnapshot(BaseModel):
    endpoints: dict[str, EndpointUsage]
    total: EndpointUsage


@dataclass(slots=True)
class _Tally:
    """An endpoint's counts as calls end: plain attributes, as every call adds to five of
    them (a model's validated assignment cost more than the rest of the accounting)."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    waited_s: float = 0.0


class UsageLedger:
    """Counts calls, cache hits, retries, errors, tokens and cost per endpoint name."""

    def __init__(self) -> None:
        self._by_endpoint: dict[str, _Tally] = {}

    def record_cache_hit(self, endpoint: EndpointConfig) -> None:
        counters = self._counters(endpoint)
        counters.calls += 1
        counters.cache_hits += 1

    def record_success(
        self, endpoint: EndpointConfig, completion: RawCompletion, *, retries: int
    ) -> None:
        counters = self._counters(endpoint)
        counters.calls += 1
        counters.retries += retries
        counters.prompt_tokens += completion.prompt_tokens
        counters.completion_tokens += completion.completion_tokens
        counters.cost += endpoint.cost(completion.prompt_tokens, completion.completion_tokens)

    def record_failure(self, endpoint: EndpointConfig, *, retries: int) -> None:
        counters = self._counters(endpoint)
        counters.calls += 1
        counters.retries += retries
        counters.errors += 1

    def record_wait(self, endpoint: EndpointConfig, seconds: float) -> None:
        self._counters(endpoint).waited_s += seconds

    def snapshot(self) -> UsageSnapshot:
        total = EndpointUsage()
        endpoints = {}
        for name, tally in self._by_endpoint.items():
            endpoints[name] = EndpointUsage.model_validate(tally, from_attributes=True)
            total.add(endpoints[name])
        return UsageSnapshot(endpoints=dict(sorted(endpoints.items())), total=total)

    def _counters(self, endpoint: EndpointConfig) -> _Tally:
        counters = self._by_endpoint.get(endpoint.name)
        if counters is None:
            counters = self._by_endpoint[endpoint.name] = _Tally()
        return counters
