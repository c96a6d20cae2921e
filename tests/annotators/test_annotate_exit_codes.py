"""`corix annotate` exits 3 when passes failed, unless --allow-failures."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Iterator

import pytest
from annotator_support import CLEAN, SPOILER, store_run
from typer.testing import CliRunner

from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.storage import Database


@pytest.fixture
def garbage_endpoint() -> Iterator[str]:
    """A mock server answering every request with broken JSON, on its own thread's loop."""
    urls: queue.Queue[str] = queue.Queue()
    stop = threading.Event()

    async def serve() -> None:
        async with running_mock_server(MockServerConfig(fail_malformed=1.0)) as url:
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


@pytest.mark.parametrize(("allow", "code"), [(False, ExitCode.FAILURES), (True, ExitCode.OK)])
def test_failed_passes_set_the_exit_code(
    sqlite_db: Database, garbage_endpoint: str, allow: bool, code: int
) -> None:
    run_id = store_run(sqlite_db, [CLEAN, SPOILER])
    args = [
        "annotate",
        run_id,
        "--db",
        sqlite_db.url,
        "--annotator",
        "llm",
        "--endpoint-url",
        garbage_endpoint,
        "--model",
        "corix-mock",
        "--max-reasks",
        "0",
        "--categories",
        "dialogue_utility",
        "--json",
    ]
    result = CliRunner().invoke(app, [*args, "--allow-failures"] if allow else args)
    assert result.exit_code == code, result.output
    assert '"passes_failed": 2' in result.output
