"""`corix serve` as a real server: start-up complete before the first request, several
processes sharing one database."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from web_support import FAST_SETTINGS, build_world

from corix.storage import Database
from corix.web.auth import SESSION_COOKIE
from corix.web.serving import CONFIG_ENV, ServeConfig


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Served:
    url: str
    tester_cookie: str
    db_url: str


def _start(db_url: str, workers: int) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    config = ServeConfig(database_url=db_url, settings=FAST_SETTINGS)
    code = (
        "from corix.web.serving import ServeConfig, serve; import os; "
        f"serve(ServeConfig.model_validate_json(os.environ['{CONFIG_ENV}_TEST']), "
        f"host='127.0.0.1', port={port}, workers={workers})"
    )
    env = {**os.environ, f"{CONFIG_ENV}_TEST": config.model_dump_json()}
    process = subprocess.Popen([sys.executable, "-c", code], env=env)
    return process, f"http://127.0.0.1:{port}"


def _wait_until_accepting(url: str, process: subprocess.Popen[bytes]) -> None:
    host, port = url.removeprefix("http://").split(":")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        try:
            with socket.create_connection((host, int(port)), timeout=0.2):
                return
        except OSError:
            time.sleep(0.01)
    raise AssertionError("the server did not start")


@pytest.fixture
def tester_db(tmp_path: Path) -> tuple[str, str]:
    """A SQLite series with a tester who has two assignments and an open sign-in."""
    url = f"sqlite:///{tmp_path / 'corix.db'}"
    db = Database(url)
    world = build_world(db)
    world.assign_tester("felix", per_tester=2)
    cookie = world.state.accounts.open_session(world.user("felix").id)
    db.dispose()
    return url, cookie


async def _many_gets(url: str, cookie: str, n: int) -> list[int]:
    async with httpx.AsyncClient(
        base_url=url, cookies={SESSION_COOKIE: cookie}, timeout=60
    ) as client:
        responses = await asyncio.gather(*(client.get("/tester") for _ in range(n)))
    # The page names the scenario, which needs the scenario packs' registry.
    return [r.status_code if "TV Spoilers" in r.text else -r.status_code for r in responses]


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_fifty_requests_the_moment_the_server_accepts_all_succeed(
    tester_db: tuple[str, str], workers: int
) -> None:
    """Registries load before the port opens: no request sees them half-filled."""
    db_url, cookie = tester_db
    process, url = _start(db_url, workers)
    try:
        _wait_until_accepting(url, process)
        statuses = asyncio.run(_many_gets(url, cookie, 50))
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert statuses == [200] * 50


def test_several_workers_share_a_listener_without_nagles_delay() -> None:
    import uvicorn

    from corix.web.serving import FACTORY, shared_listener

    listener = shared_listener(uvicorn.Config(FACTORY, factory=True, host="127.0.0.1", port=0))
    try:
        # Connections accepted on it inherit the option (Linux): no 40 ms delayed-ACK stalls.
        assert listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        assert listener.getsockname()[1] > 0
    finally:
        listener.close()
