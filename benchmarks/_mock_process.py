"""Runs the mock OpenAI-compatible server in a separate process for benchmarks.

The server gets its own process so that its CPU is not counted as the client's; the two
still share the machine's cores.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def mock_server_process(latency_ms: float) -> Iterator[str]:
    """Start ``python -m corix.llm.mock_server`` on a free port and yield its base URL."""
    command = [
        sys.executable,
        "-m",
        "corix.llm.mock_server",
        "--port",
        "0",
        "--latency-ms",
        str(latency_ms),
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            yield server.stdout.readline().rsplit(" ", 1)[-1].strip()
        finally:
            server.terminate()
            server.wait(timeout=10)
