"""Handing chunks of work to Ray workers as they finish theirs, and losing only a dead one's.

Each worker holds at most ``CHUNKS_IN_FLIGHT`` chunks: the next waits in its queue while
the current one drains, so the worker never idles and a worker that dies takes only
those chunks with it. The others go on with the rest.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, TypeVar

import ray
from ray.exceptions import RayActorError

__all__ = ["CHUNKS_IN_FLIGHT", "Dispatched", "dispatch_chunks"]

logger = logging.getLogger(__name__)

CHUNKS_IN_FLIGHT = 2

Item = TypeVar("Item")


@dataclass(frozen=True)
class Dispatched:
    dead_workers: int
    not_run: int
    """Items lost with dead workers, plus those left when no worker was alive to take them."""


async def dispatch_chunks(
    items: Iterator[Item],
    chunk_sizes: list[int],
    send: Callable[[int, list[Item]], ray.ObjectRef[Any]],
    receive: Callable[[list[Item], Any], None],
) -> Dispatched:
    """Send chunks of ``items`` (worker ``i`` gets ``chunk_sizes[i]`` at a time) with
    ``send(i, chunk)``; ``receive(chunk, result)`` gets each chunk a worker finished."""
    pending: dict[asyncio.Future[Any], tuple[int, list[Item]]] = {}
    dead: set[int] = set()
    lost = 0

    def submit(index: int) -> None:
        chunk = list(islice(items, chunk_sizes[index]))
        if chunk:
            pending[asyncio.ensure_future(send(index, chunk))] = (index, chunk)

    for index in range(len(chunk_sizes)):
        for _ in range(CHUNKS_IN_FLIGHT):
            submit(index)
    try:
        while pending:
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                index, chunk = pending.pop(future)
                try:
                    result = future.result()
                except RayActorError as exc:
                    if index not in dead:
                        logger.warning("Ray worker %d died: %s", index, exc)
                    dead.add(index)
                    lost += len(chunk)
                    continue
                receive(chunk, result)
                submit(index)
    finally:
        # A stopped run (deadline, Ctrl-C, cancel) leaves chunks in flight whose workers are
        # killed next: nobody waits for their results, so none is reported as unretrieved.
        for future in pending:
            future.cancel()
    return Dispatched(dead_workers=len(dead), not_run=lost + sum(1 for _ in items))
