"""The report in a real browser: links unfold what they point at, hostile text never runs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from playwright.async_api import async_playwright, expect

from corix.report import write_report
from corix.report.anchors import node_anchor, session_anchor
from corix.storage import Database
from support.run_builder import write_tiny_run

CHROMIUM = shutil.which("chromium")
PRESENT = re.compile(".*")  # a boolean attribute's value is "": any value means it is set
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)"
    ),
]


async def test_links_unfold_their_target_and_nothing_hostile_runs(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await write_tiny_run(sqlite_db)
    url = write_report(sqlite_db, run_id, tmp_path, bootstrap=20).html.as_uri()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = await browser.new_page()
        dialogs: list[str] = []
        problems: list[str] = []
        page.on("dialog", lambda dialog: dialogs.append(dialog.message))
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("console", lambda message: problems.append(message.text))
        await page.goto(url)

        session = page.locator(f"[id='{session_anchor('s1')}']")
        assert await session.get_attribute("open") is None
        await page.goto(f"{url}#{session_anchor('s1')}")
        # The report's script unfolds the target after the page loads: waited for, not raced.
        await expect(session).to_have_attribute("open", PRESENT)
        reply = session.locator(".utter", has_text="<script>alert(1)</script>")
        assert await reply.is_visible()
        assert await page.locator("img").count() == 0

        # A value in the headline leads to its node, unfolded inside the folded tree.
        target = node_anchor("aria_pilot-reference", "beta", "privacy")
        await page.goto(url)
        await page.locator(f"#headline a[href='#{target}']").click()
        node = page.locator(f"[id='{target}']")
        await expect(node).to_have_attribute("open", PRESENT)
        assert await node.locator("summary").first.is_visible()
        await browser.close()
    assert dialogs == [], "hostile text ran as code"
    assert problems == [], "no script error and no blocked resource"
