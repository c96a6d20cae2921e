"""A real server (uvicorn on a free port) and Debian's chromium driven by Playwright."""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvicorn
from browser_support import ACTION_TIMEOUT_MS, CHROMIUM, CHROMIUM_ARGS, SETTINGS, LiveServer
from fastapi import FastAPI
from playwright.sync_api import Browser, Page, expect, sync_playwright

from corix.domain import Level
from corix.storage import Database
from corix.web.app import create_app
from corix.web.services import EvaluationSettings
from corix.web.state import WebState


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class _Running:
    """One uvicorn server in a thread, as one server process would run it."""

    def __init__(self, app: FastAPI, port: int) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 60  # a wait on a condition: long only when loaded
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    db = Database(f"sqlite:///{tmp_path / 'corix.db'}")
    # Seeded draws: the qualification dialogues are the same in every run of a test.
    app = create_app(db, settings=SETTINGS, rng=random.Random(7))
    state: WebState = app.state.corix
    evaluation_id = state.evaluations.create(
        "Browser pilot",
        description="",
        scenarios=["tv_spoilers"],
        levels=[Level.RED_TEAMING, Level.FIELD_TESTING],
        settings=EvaluationSettings(passes_per_item=2),
    )
    applications = {
        name: state.evaluations.register_application(
            evaluation_id, name=name, spec=spec, credentials_json=""
        )
        for name, spec in (("Acme Sentinel", "demo:guarded"), ("Hostile Host", "demo:hostile"))
    }
    port = _free_port()
    running = [_Running(app, port)]

    def restart() -> WebState:
        """Stop the server and start a new one on the same database and port."""
        running.pop().stop()
        fresh = create_app(db, settings=SETTINGS, rng=random.Random(8))
        running.append(_Running(fresh, port))
        restarted: WebState = fresh.state.corix
        return restarted

    yield LiveServer(f"http://127.0.0.1:{port}", state, evaluation_id, applications, restart)
    running.pop().stop()
    db.dispose()


@pytest.fixture
def mock_endpoint() -> Iterator[str]:
    """The built-in OpenAI-compatible mock server, run as ``corix mock-server`` runs it."""
    port = _free_port()
    corix = Path(sys.executable).with_name("corix")
    process = subprocess.Popen(
        [str(corix), "mock-server", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60  # a wait on a condition: long only when loaded
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert process.poll() is None, "the mock server exited"
            assert time.monotonic() < deadline, "the mock server did not start"
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/v1"
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    # Module scope: Playwright's sync API keeps an event loop running while it is open,
    # which must not outlive the browser tests (other tests call asyncio.run).
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    expect.set_options(timeout=ACTION_TIMEOUT_MS)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def new_page(chromium: Browser) -> Iterator[Callable[[], Page]]:
    """Makes pages in fresh browser contexts (separate cookies), closed after the test."""
    contexts = []

    def make() -> Page:
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()
