"""The report's headline with five applications: each rate links to its own row, and the
table fits a laptop screen."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from corix.report import write_report
from corix.report.anchors import rates_anchor
from corix.storage import Database
from support.run_builder import write_synthetic_run

APPS = ("alpha", "beta", "gamma", "delta-assistant-with-a-long-name", "epsilon")
CHROMIUM = shutil.which("chromium")


async def _report(db: Database, out: Path) -> Path:
    run_id = await write_synthetic_run(db, applications=APPS, sessions_per_cell=2)
    return write_report(db, run_id, out, bootstrap=0).html


async def test_every_headline_rate_links_to_its_own_row(
    sqlite_db: Database, tmp_path: Path
) -> None:
    html = (await _report(sqlite_db, tmp_path)).read_text(encoding="utf-8")
    headline = html.split('<section id="headline">', 1)[1].split("</section>", 1)[0]
    targets = re.findall(r'href="#(r\.[^"]+)"', headline)
    for app in APPS:
        assert rates_anchor("violations", app) in targets
    for target in set(targets):
        rows = re.findall(rf'<tr id="{re.escape(target)}"><td>([^<]+)</td>', html)
        assert len(rows) == 1, target  # one row carries the id...
        section, application = target.split(".")[1:3]
        assert rows[0] == application  # ...and it is that application's row
        assert section in ("violations", "groundedness", "ip_leakage", "harmful_content")


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")
async def test_the_headline_fits_a_laptop_screen(sqlite_db: Database, tmp_path: Path) -> None:
    url = (await _report(sqlite_db, tmp_path)).as_uri()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        page = await browser.new_page(viewport={"width": 1366, "height": 768})
        await page.goto(url)
        wrap = page.locator("#headline .table-wrap")
        scroll, client = await wrap.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert scroll <= client, "five applications fit without scrolling sideways"
        # A rate's link scrolls to its row, which is highlighted as the target.
        link = page.locator(f"#headline a[href='#{rates_anchor('violations', 'epsilon')}']")
        await link.first.click()
        row = page.locator(f"[id='{rates_anchor('violations', 'epsilon')}']")
        assert await row.is_visible()
        assert await row.evaluate("e => e.matches(':target')")
        await browser.close()
