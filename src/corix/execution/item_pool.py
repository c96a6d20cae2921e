"""A pool of worker tasks on this event loop that runs work items under a bound."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from corix.execution.work import WorkItem
from corix.llm import raise_if_cancelling

Handler = Callable[[WorkItem], Awaitable[None]]


class WorkItemPool:
    """A fixed pool of worker tasks pulling from one iterator: memory stays flat however
    many items there are, and at most ``concurrency`` sessions are open at once."""

    def __init__(self, concurrency: int) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency

    async def run(self, items: Iterable[WorkItem], handler: Handler) -> None:
        iterator = iter(items)

        async def worker() -> None:
            for item in iterator:  # shared iterator: each item is taken exactly once
                raise_if_cancelling()  # a stopped run starts no new session
                await handler(item)
                # A handler that never waits (an in-process application) would otherwise
                # run every item in one go, starving the writer of its turn to commit.
                await asyncio.sleep(0)

        async with asyncio.TaskGroup() as group:
            for _ in range(self.concurrency):
                group.create_task(worker())
