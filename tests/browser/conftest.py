"""A real server (uvicorn on a free port) and Debian's chromium driven by Playwright."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvicorn
from browser_support import CHROMIUM, CHROMIUM_ARGS, SETTINGS, LiveServer
from playwright.sync_api import Browser, Page, sync_playwright

from corix.domain import Level
from corix.storage import Database
from corix.web import create_app
from corix.web.services import EvaluationSettings
from corix.web.state import WebState


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    db = Database(f"sqlite:///{tmp_path / 'corix.db'}")
    app = create_app(db, settings=SETTINGS)
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
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not runner.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    yield LiveServer(f"http://127.0.0.1:{port}", state, evaluation_id, applications)
    runner.should_exit = True
    thread.join(timeout=10)
    db.dispose()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    # Module scope: Playwright's sync API keeps an event loop running while it is open,
    # which must not outlive the browser tests (other tests call asyncio.run).
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
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
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()
