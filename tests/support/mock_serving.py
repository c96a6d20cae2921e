"""The built-in mock OpenAI server on a thread of its own, for code that runs its own loop
(the ``corix`` command in this process)."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager

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
