"""Handing chunks to Ray workers when some die: at start, mid-work, out of memory.

No Ray cluster: the workers' calls are coroutines that answer, or raise what Ray raises
for a call whose worker process is gone.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ray.exceptions import ActorDiedError, OutOfMemoryError, RayTaskError

from corix.errors import CorixError
from corix.execution.ray_dispatch import dispatch_chunks, open_workers


async def _answer(value: Any) -> Any:
    await asyncio.sleep(0)
    return value


async def _die(error: BaseException) -> Any:
    await asyncio.sleep(0)
    raise error


async def test_a_worker_that_dies_while_starting_gets_no_work() -> None:
    opened, dead = await open_workers(
        [_answer(101), _die(ActorDiedError()), _die(OutOfMemoryError("node out of memory"))]
    )
    assert (opened, dead) == ({0: 101}, {1, 2})

    sent: list[tuple[int, list[int]]] = []
    done: list[int] = []

    async def run(index: int, chunk: list[int]) -> list[int]:
        sent.append((index, chunk))
        return chunk

    async def receive(chunk: list[int], result: list[int]) -> None:
        done.extend(result)

    outcome = await dispatch_chunks(
        iter(range(10)), [2, 2, 2], lambda i, chunk: run(i, chunk), receive, dead=dead
    )
    assert sorted(done) == list(range(10))
    assert {index for index, _ in sent} == {0}  # never the two that died at start
    assert outcome.dead == {1, 2} and outcome.not_run == 0


async def test_when_every_worker_dies_while_starting_it_says_so_in_one_line() -> None:
    with pytest.raises(CorixError, match=r"every Ray worker died while starting \(2\)") as error:
        await open_workers([_die(ActorDiedError()), _die(ActorDiedError())])
    assert "\n" not in str(error.value)


async def test_a_failure_of_the_work_itself_is_no_worker_death() -> None:
    failure = RayTaskError("open", "traceback", ValueError("bad plan"))
    with pytest.raises(RayTaskError):
        await open_workers([_answer(1), _die(failure)])


async def test_a_worker_killed_out_of_memory_mid_work_has_its_chunks_run_elsewhere() -> None:
    calls = {0: 0, 1: 0}
    done: list[int] = []

    async def run(index: int, chunk: list[int]) -> list[int]:
        calls[index] += 1
        await asyncio.sleep(0.001)
        if index == 1 and calls[1] >= 2:  # its second chunk: the memory monitor kills it
            raise OutOfMemoryError("Task was killed due to the node running low on memory")
        return chunk

    async def receive(chunk: list[int], result: list[int]) -> None:
        done.extend(result)

    async def redo(chunk: list[int]) -> list[int]:
        return chunk

    outcome = await dispatch_chunks(
        iter(range(20)), [2, 2], lambda i, chunk: run(i, chunk), receive, redo=redo
    )
    assert sorted(done) == list(range(20))  # each once: nothing lost, nothing twice
    assert outcome.dead == {1} and outcome.not_run == 0 and outcome.resent > 0
