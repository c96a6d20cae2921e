"""Handing small chunks of work to Ray workers, and sending a dead worker's chunks again.

Each worker keeps a bounded queue: it holds at most its share of the bound plus one more
chunk (chunks of a quarter of its share), so its slots never idle while the next chunk
travels, and a slow session holds back only its own small chunk. A worker that dies —
killed, out of memory, its node gone, at any moment from its start — takes only what it
held: one that dies while it opens gets no work (:func:`open_workers`), and one that dies
later has its items go back to the front of the queue, after ``redo`` (which drops what
the dead worker did store and returns what still needs running), and live workers run
them; an item is sent at most ``max_attempts`` times. Only what is left when no worker is
alive, or has used its attempts, is reported as not run.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Generic, TypeVar

import ray
from ray.exceptions import (
    LocalRayletDiedError,
    NodeDiedError,
    OutOfMemoryError,
    RayActorError,
    WorkerCrashedError,
)

from corix.errors import CorixError

__all__ = [
    "MAX_ATTEMPTS",
    "WORKER_LOST",
    "Dispatched",
    "chunk_size",
    "close_workers",
    "dispatch_chunks",
    "open_workers",
]

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
"""Times an item is sent at most: once, and again after each of two worker deaths."""

CHUNKS_PER_SHARE = 4

WORKER_LOST = (
    RayActorError,
    WorkerCrashedError,
    OutOfMemoryError,
    NodeDiedError,
    LocalRayletDiedError,
)
"""What Ray raises for a call whose worker process is gone: the actor died or was
killed (by a signal, the out-of-memory killer, Ray's memory monitor), or its node did."""

Item = TypeVar("Item")


def chunk_size(share: int) -> int:
    """Items per chunk for a worker holding ``share`` slots: a quarter of it, at least 1."""
    return max(1, math.ceil(share / CHUNKS_PER_SHARE))


@dataclass(frozen=True)
class Dispatched:
    dead: frozenset[int]
    """The workers that died."""
    not_run: int
    """Items left when no worker was alive to take them or after their last attempt."""
    resent: int = 0
    """Items sent again after their worker died."""


async def dispatch_chunks(
    items: Iterator[Item],
    shares: list[int],
    send: Callable[[int, list[Item]], ray.ObjectRef[Any]],
    receive: Callable[[list[Item], Any], Awaitable[None]],
    *,
    redo: Callable[[list[Item]], Awaitable[list[Item]]] | None = None,
    max_attempts: int = MAX_ATTEMPTS,
    dead: Iterable[int] = (),
) -> Dispatched:
    """Run ``items`` on workers holding ``shares`` slots each: ``send(i, chunk)`` hands a
    chunk to worker ``i``; ``await receive(chunk, result)`` takes each finished chunk (and
    may wait, holding back further results, while the driver's writer catches up).
    Workers at ``dead`` (died while opening) get nothing.

    Without ``redo`` a dead worker's items are not sent again (nothing can tell which of
    them it stored)."""
    chunks = _Chunks(items, shares, send, redo, max_attempts, set(dead))
    chunks.fill_live()
    try:
        while chunks.pending:
            done, _ = await asyncio.wait(chunks.pending, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                await chunks.take_back(future, receive)
            chunks.fill_live()
    finally:
        # A stopped run (deadline, Ctrl-C, cancel) leaves chunks in flight whose workers are
        # killed next: nobody waits for their results, so none is reported as unretrieved.
        for future in chunks.pending:
            future.cancel()
    return chunks.outcome()


class _Chunks(Generic[Item]):
    """One dispatch: the chunks in flight (by future), what each worker holds, and the
    items waiting to be sent again, each with the attempt it would be."""

    def __init__(
        self,
        items: Iterator[Item],
        shares: list[int],
        send: Callable[[int, list[Item]], ray.ObjectRef[Any]],
        redo: Callable[[list[Item]], Awaitable[list[Item]]] | None,
        max_attempts: int,
        dead: set[int],
    ) -> None:
        self.items, self.shares, self.send, self.redo = items, shares, send, redo
        self.max_attempts, self.dead = max_attempts, dead
        self.pending: dict[asyncio.Future[Any], tuple[int, list[tuple[Item, int]]]] = {}
        self.held = [0] * len(shares)  # items each worker holds
        self.sizes = [chunk_size(share) for share in shares]
        self.again: deque[tuple[Item, int]] = deque()
        self.given_up = self.resent = 0

    def take(self, count: int) -> list[tuple[Item, int]]:
        chunk = [self.again.popleft() for _ in range(min(count, len(self.again)))]
        chunk.extend((item, 1) for item in islice(self.items, count - len(chunk)))
        return chunk

    def fill(self, index: int) -> None:
        while self.held[index] < self.shares[index] + self.sizes[index]:
            chunk = self.take(self.sizes[index])
            if not chunk:
                return
            self.pending[asyncio.ensure_future(self.send(index, [item for item, _ in chunk]))] = (
                index,
                chunk,
            )
            self.held[index] += len(chunk)

    def fill_live(self) -> None:
        for index in range(len(self.shares)):
            if index not in self.dead:
                self.fill(index)

    async def take_back(
        self,
        future: asyncio.Future[Any],
        receive: Callable[[list[Item], Any], Awaitable[None]],
    ) -> None:
        """A finished chunk: its result to ``receive``, or its items queued again when its
        worker died."""
        index, chunk = self.pending.pop(future)
        self.held[index] -= len(chunk)
        try:
            result = future.result()
        except WORKER_LOST as exc:
            if index not in self.dead:
                logger.warning("Ray worker %d died: %s", index, exc)
            self.dead.add(index)
            await self.requeue(chunk)
            return
        await receive([item for item, _ in chunk], result)

    async def requeue(self, chunk: list[tuple[Item, int]]) -> None:
        if self.redo is None:
            self.given_up += len(chunk)
            return
        attempts = {id(item): n for item, n in chunk}  # redo returns some of these objects
        for item in await self.redo([item for item, _ in chunk]):
            if attempts[id(item)] >= self.max_attempts:
                self.given_up += 1
            else:
                self.again.append((item, attempts[id(item)] + 1))
                self.resent += 1

    def outcome(self) -> Dispatched:
        left = len(self.again) + sum(1 for _ in self.items)
        return Dispatched(
            dead=frozenset(self.dead), not_run=self.given_up + left, resent=self.resent
        )


async def open_workers(opening: Sequence[ray.ObjectRef[Any]]) -> tuple[dict[int, Any], set[int]]:
    """Wait for every worker's ``open`` call: what each live one returned, by index, and
    the indexes of those that died meanwhile (they get no work). Raises
    :class:`~corix.errors.CorixError` when none is left."""
    results = await asyncio.gather(*opening, return_exceptions=True)
    opened: dict[int, Any] = {}
    dead: set[int] = set()
    for index, result in enumerate(results):
        if isinstance(result, WORKER_LOST):
            logger.warning("Ray worker %d died while starting: %s", index, result)
            dead.add(index)
        elif isinstance(result, BaseException):
            raise result
        else:
            opened[index] = result
    if not opened:
        first = str(results[0]).strip().splitlines() if results else []
        raise CorixError(
            f"every Ray worker died while starting ({len(dead)}): "
            f"{first[0] if first else 'no reason given'}"
        )
    return opened, dead


async def close_workers(workers: Sequence[Any], live: Iterable[int]) -> dict[int, Any]:
    """Call ``close`` on the workers at ``live``: what each returned, by index.

    A worker that died after its last chunk came back lost nothing (every result it sent
    was taken), so it is left out, not a failure of the whole job."""
    indexes = list(live)
    closing = await asyncio.gather(
        *(workers[index].close.remote() for index in indexes), return_exceptions=True
    )
    closed: dict[int, Any] = {}
    for index, result in zip(indexes, closing, strict=True):
        if isinstance(result, WORKER_LOST):
            logger.warning("Ray worker %d died after its last chunk: %s", index, result)
        elif isinstance(result, BaseException):
            raise result
        else:
            closed[index] = result
    return closed
