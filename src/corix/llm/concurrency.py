"""How many requests an endpoint gets at once: a fixed bound, or one that adapts (AIMD).

A cloud endpoint serves hundreds of requests at once; a local server answers one at a
time and queues the rest, so each queued request's latency grows with the queue until it
times out. :class:`AdaptiveConcurrency` finds the level an endpoint sustains the way TCP
congestion control finds a link's: it measures the endpoint alone first (the first few
requests go one at a time), then doubles the limit while latency holds (slow start), then
adds one at a time (additive increase), and cuts back when the endpoint is overloaded:

* a timeout, a 429 or a 503 halves the limit;
* queueing — a level whose median latency has grown over a lower level's nearly in
  proportion to the level (at least 1.4×, or √ of the levels' ratio), so the extra
  requests bought no throughput — goes back to the lower level that served the most per
  second, and growth waits 16 rounds there (doubling each time, up to 256). An endpoint
  that answers one request at a time thus settles at 1.

Latencies are compared as medians of at least six completions per level, never one round
against the fastest sample seen: cloud jitter alone trips that (with a log-normal spread
of 0.3 it held a parallel endpoint near two in flight of eight). A level must be measured before
the limit grows past it.

A *round* is as many completions as the limit allows at once. Latency is normalized by
the request's size (generated tokens plus a tenth of the prompt's, a rough rule for how
models spend time) so that long replies are not mistaken for queueing. The limit grows
only in rounds where callers actually waited for a slot, and at most one cut is made per
round: many requests timing out together are one signal, not many.

Both limits implement :class:`ConcurrencyLimit`, the one interface the client uses. On a
cluster, each worker's clients take their share of the endpoint's bound
(:func:`concurrency_share`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import statistics
from collections import deque
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

logger = logging.getLogger(__name__)

PROMPT_TOKEN_WEIGHT = 0.1
"""A prompt token costs a model about a tenth of a generated one (prefill is batched)."""
NOISE_FLOOR_S = 0.02
"""Latency differences below this are scheduling noise, never queueing."""
_LEVEL_SAMPLES = 6
"""Completions at one level before its median latency is compared with a lower level's."""
_NO_GAIN_RATIO = 1.4
"""Latency grown this much (at least; √ of the levels' ratio when larger) over a lower
level's means the extra requests only queued: halfway, in log scale, between a parallel
endpoint (×1) and a serialized one (×2 from level 1 to 2)."""
_HOLD_ROUNDS = 16
_HOLD_ROUNDS_MAX = 256


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one request that held a slot came to."""

    latency_s: float
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def size(self) -> float:
        return 1.0 + self.completion_tokens + PROMPT_TOKEN_WEIGHT * self.prompt_tokens


class Slot(Protocol):
    """A held permission to send one request; report how it went before releasing it."""

    def succeeded(self, outcome: Outcome) -> None: ...

    def overloaded(self) -> None:
        """The endpoint timed out, answered 429 or 503."""


class ConcurrencyLimit(Protocol):
    """The bound on requests in flight at one endpoint."""

    @property
    def limit(self) -> int: ...

    def slot(self) -> contextlib.AbstractAsyncContextManager[Slot]: ...


class _Gate:
    """A semaphore whose size may change while requests wait (first come, first served)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> bool:
        """Take a place; returns whether the caller had to wait for it."""
        if self.in_flight < self.size and not self._waiters:
            self.in_flight += 1
            return False
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # granted just as it was cancelled: give it back
            elif waiter in self._waiters:  # wake() drops cancelled waiters itself
                self._waiters.remove(waiter)
            raise
        return True

    def release(self) -> None:
        self.in_flight -= 1
        self.wake()

    def wake(self) -> None:
        while self._waiters and self.in_flight < self.size:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)

    def resize(self, size: int) -> None:
        self.size = size
        self.wake()


class _FixedSlot:
    def succeeded(self, outcome: Outcome) -> None:
        """A fixed limit learns nothing."""

    def overloaded(self) -> None:
        """A fixed limit learns nothing."""


class _Hold:
    """One place at a gate, held while a request is in flight: a plain context manager,
    as every model call enters one (a generator-based one cost 1.6 µs against 0.5)."""

    __slots__ = ("_gate", "_taken")

    def __init__(self, gate: _Gate, taken: Callable[[bool], Slot]) -> None:
        self._gate = gate
        self._taken = taken
        """Called with whether the place was waited for, once it is taken: the slot."""

    async def __aenter__(self) -> Slot:
        return self._taken(await self._gate.acquire())

    async def __aexit__(self, *_exc: object) -> None:
        self._gate.release()


_FIXED_SLOT = _FixedSlot()


class FixedConcurrency:
    """At most ``limit`` requests in flight, whatever the endpoint does."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a concurrency limit is at least 1, got {limit}")
        self._gate = _Gate(limit)

    @property
    def limit(self) -> int:
        return self._gate.size

    def slot(self) -> contextlib.AbstractAsyncContextManager[Slot]:
        return _Hold(self._gate, _fixed_slot)


def _fixed_slot(_waited: bool) -> Slot:
    return _FIXED_SLOT


class _AdaptiveSlot:
    def __init__(self, owner: AdaptiveConcurrency, round_no: int) -> None:
        self._owner = owner
        self._round = round_no

    def succeeded(self, outcome: Outcome) -> None:
        self._owner._on_success(self._round, outcome)

    def overloaded(self) -> None:
        self._owner._cut(self._round, 0.5, "overloaded (timeout, 429 or 503)")


class AdaptiveConcurrency:
    """An AIMD limit between 1 and ``ceiling``, starting at ``initial`` (module docstring)."""

    def __init__(self, *, initial: int, ceiling: int, name: str = "") -> None:
        if initial < 1:
            raise ValueError(f"the initial concurrency is at least 1, got {initial}")
        self._name = name
        self._ceiling = ceiling
        self._limit = float(min(initial, ceiling))
        self._probing = self._limit > 1  # a cut ends the probe too (it resizes the gate)
        self._gate = _Gate(1 if self._probing else int(self._limit))
        self._slow_start = True
        self._by_level: dict[int, deque[float]] = {}
        self._hold_until_round = 0
        self._hold_rounds = _HOLD_ROUNDS
        self._round = 0
        self._round_samples: list[tuple[float, float]] = []
        self._round_waited = False
        self.peak = int(self._limit)
        """The highest limit reached (the initial one included)."""
        self.cuts = 0
        """How often the limit was cut."""

    @property
    def limit(self) -> int:
        return self._gate.size

    def slot(self) -> contextlib.AbstractAsyncContextManager[Slot]:
        return _Hold(self._gate, self._taken)

    def _taken(self, waited: bool) -> Slot:
        if waited or self._gate.in_flight >= self._gate.size:
            self._round_waited = True
        return _AdaptiveSlot(self, self._round)

    def _on_success(self, round_no: int, outcome: Outcome) -> None:
        sample = outcome.latency_s / outcome.size
        if round_no != self._round:
            return  # sent under a limit already changed
        level = self._gate.size
        self._by_level.setdefault(level, deque(maxlen=2 * _LEVEL_SAMPLES)).append(sample)
        if self._probing:
            if len(self._by_level[level]) >= _LEVEL_SAMPLES:
                self._probing = False
                self._set(self._limit, "latency measured alone")
            else:
                self._next_round()
            return
        self._round_samples.append((sample, outcome.size))
        if len(self._round_samples) < level:
            return
        floor = NOISE_FLOOR_S / statistics.median(size for _, size in self._round_samples)
        no_gain_below = self._level_without_gain(level, floor)
        if no_gain_below is not None:
            self._fall_back(no_gain_below, level)
        elif self._round_waited and self._may_grow(level):
            grown = self._limit * 2 if self._slow_start else self._limit + 1
            self._set(min(float(self._ceiling), grown), "latency holds")
        else:
            self._next_round()

    def _level_without_gain(self, level: int, floor: float) -> int | None:
        """The lower level that serves the most per second, if ``level`` serves no more."""
        here = self._by_level.get(level, ())
        if len(here) < _LEVEL_SAMPLES:
            return None
        latency = statistics.median(here)
        no_gain: list[tuple[float, int]] = []
        for lower, seen in self._by_level.items():
            if lower >= level or len(seen) < _LEVEL_SAMPLES:
                continue
            needed = max(_NO_GAIN_RATIO, (level / lower) ** 0.5)
            lower_latency = statistics.median(seen)
            if latency > needed * lower_latency + floor:
                no_gain.append((lower / lower_latency, lower))
        return max(no_gain)[1] if no_gain else None

    def _fall_back(self, lower: int, level: int) -> None:
        self._slow_start = False
        self.cuts += 1
        self._hold_until_round = self._round + 1 + self._hold_rounds
        self._hold_rounds = min(2 * self._hold_rounds, _HOLD_ROUNDS_MAX)
        for above in [m for m in self._by_level if m > lower]:
            del self._by_level[above]  # measured afresh when the limit grows again
        self._set(float(lower), f"{level} in flight served no more than {lower} (queueing)")

    def _may_grow(self, level: int) -> bool:
        """Below the ceiling, not held, and this level measured: a level must show that it
        serves more than the one below before the limit moves past it."""
        measured = len(self._by_level.get(level, ())) >= _LEVEL_SAMPLES
        return self._limit < self._ceiling and self._round >= self._hold_until_round and measured

    def _cut(self, round_no: int, factor: float, why: str) -> None:
        if round_no != self._round:
            return  # one cut per round
        self._slow_start = False
        self.cuts += 1
        self._set(max(1.0, self._limit * factor), why)

    def _set(self, limit: float, why: str) -> None:
        before = self._gate.size
        self._limit = limit
        self._probing = False
        self._gate.resize(int(limit))
        self.peak = max(self.peak, self._gate.size)
        if self._gate.size != before:
            logger.info(
                "endpoint %s: concurrency %d → %d (%s)", self._name, before, self._gate.size, why
            )
        self._next_round()

    def _next_round(self) -> None:
        self._round += 1
        self._round_samples = []
        self._round_waited = False


_worker_share: ContextVar[tuple[int, int] | None] = ContextVar(
    "corix_concurrency_share", default=None
)


@contextlib.contextmanager
def concurrency_share(index: int, workers: int) -> Iterator[None]:
    """Clients opened inside this block hold worker ``index``'s share (of ``workers``) of
    their endpoint's ``max_concurrency``, so that workers of one cluster keep the
    endpoint's bound together instead of each on its own (see :func:`shared_bound`)."""
    token = _worker_share.set((index, workers))
    try:
        yield
    finally:
        _worker_share.reset(token)


def shared_bound(bound: int) -> int:
    """This process's part of an endpoint's concurrency ``bound``: all of it, or inside
    :func:`concurrency_share` an even share (shares add up to ``bound`` and differ by at
    most one). A worker keeps at least one, or its sessions could never call: a bound
    smaller than the number of workers is exceeded by that much."""
    share = _worker_share.get()
    if share is None:
        return bound
    index, workers = share
    return max(1, even_share(bound, index, workers))


def even_share(bound: int, index: int, parts: int) -> int:
    """Part ``index`` of ``bound`` split into ``parts``: parts add up to ``bound`` and differ
    by at most one."""
    return bound // parts + (1 if index < bound % parts else 0)
