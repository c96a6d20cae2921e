"""The local transport's pool of model processes: one request per process at a time, and
a request sent to the idle process whose last prompt shares the longest start with it."""

from __future__ import annotations

import asyncio

import pytest

from corix.llm import EndpointConfig, LLMClient, ScriptedTransport
from corix.llm.local_transport import IdlePool


async def test_a_member_serves_one_caller_at_a_time_and_callers_wait_for_one() -> None:
    pool = IdlePool(["a", "b"])
    busy: set[str] = set()
    most_busy = 0

    async def call(opening: str) -> None:
        nonlocal most_busy
        async with pool.one(opening) as member:
            assert member not in busy
            busy.add(member)
            most_busy = max(most_busy, len(busy))
            await asyncio.sleep(0.01)
            busy.discard(member)

    await asyncio.gather(*(call(f"prompt {i}") for i in range(6)))
    assert most_busy == 2


async def test_the_member_that_last_read_the_longest_shared_start_is_preferred() -> None:
    pool = IdlePool(["a", "b"])
    harm, category = "harm guidelines | dialogue 1", "category task | dialogue 1"
    async with pool.one(harm) as first, pool.one(category) as second:
        assert {first, second} == {"a", "b"}
    for dialogue in (2, 3, 4):
        async with pool.one(f"category task | dialogue {dialogue}") as member:
            assert member == second
        async with pool.one(f"harm guidelines | dialogue {dialogue}") as member:
            assert member == first
    # An item's next pass (the same prompt) goes where the whole prompt was read last.
    async with pool.one("harm guidelines | dialogue 3") as member:
        assert member == first


async def test_a_failing_caller_gives_its_member_back() -> None:
    pool = IdlePool(["a"])
    with pytest.raises(RuntimeError):
        async with pool.one("x"):
            raise RuntimeError("the model process died")
    async with asyncio.timeout(1), pool.one("y") as member:
        assert member == "a"


@pytest.mark.parametrize("processes", [1, 2])
async def test_a_local_endpoint_has_one_request_in_flight_per_process(processes: int) -> None:
    endpoint = EndpointConfig(base_url="local:model.gguf", model="m", processes=processes)
    async with LLMClient(endpoint, transport=ScriptedTransport()) as client:
        assert client.concurrency.limit == processes


def test_processes_are_for_local_models_only() -> None:
    assert EndpointConfig(base_url="local:model.gguf", model="m", processes=2).processes == 2
    with pytest.raises(ValueError, match="processes is for 'local' endpoints"):
        EndpointConfig(base_url="http://127.0.0.1:8000/v1", model="m", processes=2)
