"""A waiter cancelled at the concurrency gate leaves with CancelledError, never anything else."""

from __future__ import annotations

import asyncio

import pytest

from corix.llm.concurrency import FixedConcurrency


async def test_a_waiter_cancelled_just_before_a_release_raises_cancelled() -> None:
    limit = FixedConcurrency(1)
    queued = asyncio.Event()
    waiter: asyncio.Task[None] | None = None

    async def wait_for_slot() -> None:
        async with limit.slot():
            pass

    async def hold_then_cancel_the_waiter() -> None:
        nonlocal waiter
        async with limit.slot():
            waiter = asyncio.create_task(wait_for_slot())
            await asyncio.sleep(0)  # the waiter queues at the gate
            queued.set()
            waiter.cancel()  # and in the same step the release wakes the gate, which
            # drops the cancelled waiter before the waiter itself sees its cancellation

    await hold_then_cancel_the_waiter()
    assert waiter is not None and queued.is_set()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    async with asyncio.timeout(1):  # the place is free again
        async with limit.slot():
            pass


async def test_many_cancelled_waiters_leave_the_gate_usable() -> None:
    limit = FixedConcurrency(2)
    release = asyncio.Event()

    async def call() -> None:
        async with limit.slot():
            await release.wait()

    tasks = [asyncio.create_task(call()) for _ in range(50)]
    await asyncio.sleep(0.01)
    for task in tasks[10:]:
        task.cancel()
    release.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(r is None for r in results[:10])
    assert all(isinstance(r, asyncio.CancelledError) for r in results[10:])
    assert limit._gate.in_flight == 0
