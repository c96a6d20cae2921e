"""Timeouts that follow the latencies an endpoint shows.

A fixed timeout fits one host: on a slow one (a local model on a loaded machine, a server
that answers one request at a time and queues the rest) replies take longer than the
default, and every call then fails "no reply within …" while the server is merely busy;
abandoned requests keep it busier still. So an attempt's timeout is the larger of the
declared ``timeout_s`` (the floor) and :data:`P95_MULTIPLE` times the 95th percentile of
the latest :data:`WINDOW` successful replies' latencies, once :data:`MIN_SAMPLES` were
seen; the call deadline (unless there is none) grows in the same proportion, so it holds
as many attempts as declared (three 60 s attempts in 180 s by default) and a deadline
declared short stays short while the endpoint is fast. Latencies are measured from the
moment a request is sent, so time spent in corix's own queues (rate limits, concurrency
slots) never counts. The decision and its figures are in docs/models.md.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections import deque

from corix.domain import EndpointConfig

__all__ = ["MIN_SAMPLES", "P95_MULTIPLE", "WINDOW", "AdaptiveTimeout", "p95"]

P95_MULTIPLE = 4.0
"""A reply four times slower than 95% of the recent ones is taken as lost, not slow."""
MIN_SAMPLES = 5
WINDOW = 50


def p95(latencies: list[float]) -> float:
    """The nearest-rank 95th percentile: the smallest value at least 95% are not above."""
    return _p95_of_ordered(sorted(latencies))


def _p95_of_ordered(ordered: list[float]) -> float:
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


class AdaptiveTimeout:
    """An endpoint's attempt timeout and call deadline, adapted to its observed latencies."""

    def __init__(self, endpoint: EndpointConfig) -> None:
        self._floor = endpoint.timeout_s
        self._deadline = endpoint.call_deadline_s
        self._recent: deque[float] = deque()
        """The latest :data:`WINDOW` latencies, oldest first."""
        self._ordered: list[float] = []
        """The same latencies in ascending order, updated as each reply comes: at a thousand
        calls in flight a reply comes before nearly every call, and sorting the window
        again each time cost more."""
        self._timeout: float | None = self._floor
        """The timeout for the latencies seen so far; ``None`` once one more was seen."""

    def observe(self, latency_s: float) -> None:
        """A successful reply's latency, from the moment its request was sent."""
        if len(self._recent) == WINDOW:
            del self._ordered[bisect_left(self._ordered, self._recent.popleft())]
        self._recent.append(latency_s)
        insort(self._ordered, latency_s)
        self._timeout = None

    @property
    def timeout_s(self) -> float:
        # Every call reads it two or three times and observes once: work it out once per reply.
        if self._timeout is None:
            if len(self._recent) < MIN_SAMPLES:
                self._timeout = self._floor
            else:
                self._timeout = max(self._floor, P95_MULTIPLE * _p95_of_ordered(self._ordered))
        return self._timeout

    @property
    def deadline_s(self) -> float | None:
        if self._deadline is None:
            return None
        return self._deadline * self.timeout_s / self._floor
