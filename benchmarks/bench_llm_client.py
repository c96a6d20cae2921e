"""Throughput and CPU cost of LLMClient against the mock server running in another process.

    python benchmarks/bench_llm_client.py --calls 3000 --concurrency 300

Prints the wall time, the ideal wall time (calls × latency / concurrency), their ratio,
and the client's CPU time per call. The server runs in its own process so that its CPU
is not counted as the client's (both still share the machine's cores).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from _bench_support import mock_endpoint, mock_server_process, mock_stats, slot_occupancy
from corix.llm import ChatMessage, ChatRequest, LLMClient, ResponseCache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=300)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--cache", action="store_true", help="write replies to a SQLite cache")
    args = parser.parse_args()

    with mock_server_process(args.latency_ms) as base_url:
        asyncio.run(_measure(base_url, args))


async def _measure(base_url: str, args: argparse.Namespace) -> None:
    endpoint = mock_endpoint(base_url, args.concurrency)
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "cache.sqlite") if args.cache else None
        async with LLMClient(endpoint, cache=cache) as client:
            # Warm up: open the keep-alive connections outside the measurement.
            await asyncio.gather(*(client.chat(_request(-i - 1)) for i in range(args.concurrency)))
            requests = [_request(i) for i in range(args.calls)]
            before = mock_stats(base_url)
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            await asyncio.gather(*(client.chat(request) for request in requests))
            wall = time.perf_counter() - wall_start
            cpu = time.process_time() - cpu_start
            latency_s = args.latency_ms / 1000
            slots = slot_occupancy(
                before, mock_stats(base_url), args.concurrency, ramp_s=latency_s, drain_s=latency_s
            )
        if cache is not None:
            cache.close()
    server_stats = mock_stats(base_url)

    ideal = args.calls * args.latency_ms / 1000.0 / args.concurrency
    print(f"calls               {args.calls} at concurrency {args.concurrency}")
    print(f"server latency      {args.latency_ms:g} ms")
    print(f"cache               {'on' if args.cache else 'off'}")
    print(f"wall time           {wall:.3f} s")
    print(f"ideal wall time     {ideal:.3f} s")
    print(f"ratio               {wall / ideal:.2f}")
    print(f"client CPU per call {cpu * 1000.0 / args.calls:.3f} ms")
    print(f"server max in-flight {server_stats['max_in_flight']}")
    print(f"slots               {slots.describe()}")


def _request(number: int) -> ChatRequest:
    text = f"Question {number}: what should I pack for a two-day hike?"
    return ChatRequest(messages=[ChatMessage(role="user", content=text)], seed=number)


if __name__ == "__main__":
    main()
