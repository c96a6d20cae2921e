"""The results home in a real browser: hostile run names stay text, and the compare form
opens two runs side by side."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from conftest import _free_port, _Running
from corix.storage import Database
from corix.web import results_home_app
from support.run_builder import write_tiny_run

HOSTILE = 'run-"><img src=x onerror=alert(1)>'


@pytest.fixture
def home_url(tmp_path: Path) -> Iterator[str]:
    db = Database(f"sqlite:///{tmp_path / 'corix.db'}")
    # In a thread of its own: an event loop may already run in this one.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, write_tiny_run(db, HOSTILE)).result()
    port = _free_port()
    running = _Running(results_home_app(db, tmp_path / "reports"), port)
    yield f"http://127.0.0.1:{port}"
    running.stop()
    db.dispose()


def test_the_results_home_lists_and_compares_runs(
    home_url: str, new_page: Callable[[], Page], tmp_path: Path
) -> None:
    page = new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(home_url)
    expect(page.get_by_role("heading", name="Runs", exact=True)).to_be_visible()
    expect(page.get_by_role("cell", name=HOSTILE, exact=True)).to_be_visible()
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_role("columnheader", name="change")).to_be_visible()
    assert page.locator("img").count() == 0 and dialogs == []
    screenshot = page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)
    assert len(screenshot) > 1000
