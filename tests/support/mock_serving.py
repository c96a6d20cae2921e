"""The built-in mock OpenAI server: on a thread of its own, for code that runs its own loop
(the ``corix`` command in this process), and what it reports of the requests it saw."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import aiohttp

from corix.llm.mock_server import MockServerConfig, running_mock_server


@contextmanager
def serving(config: MockServerConfig) -> Iterator[str]:
    """The server's base URL while the block runs."""
    urls: queue.Queue[str] = queue.Queue()
    stop = threading.Event()

    async def serve() -> None:
        async with running_mock_server(config) as url:
            urls.put(url)
            while not stop.is_set():
                await asyncio.sleep(0.02)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    try:
        yield urls.get(timeout=10)
    finally:
        stop.set()
        thread.join(timeout=10)


async def mock_stats(base_url: str) -> dict[str, Any]:
    """The server's ``/mock/stats``: requests seen, in flight over time, faults injected."""
    async with (
        aiohttp.ClientSession() as session,
        session.get(base_url.removesuffix("/v1") + "/mock/stats") as response,
    ):
        stats: dict[str, Any] = json.loads(await response.read())
    return stats
