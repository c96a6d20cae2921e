"""A run report and a series report on a phone (390 px): every table wraps inside its box,
and axe-core (bundled by axe-playwright-python) finds no serious or critical violation."""

from __future__ import annotations

from pathlib import Path

import pytest
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Page, async_playwright

from corix.report import write_report
from corix.storage import Database
from support.run_builder import write_synthetic_run
from support.web_records import series_of

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
PHONE = {"width": 390, "height": 844}
GRAVE = ("serious", "critical")
# Names as long as real ones: the words that used to hold tables wider than a phone.
APPLICATIONS = ("assistant-unguarded", "assistant-guarded", "assistant-agent")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]


async def _tables_wider_than_their_box(page: Page) -> list[str]:
    # Every folded part open: a table inside closed details has no width to measure.
    return list(
        await page.evaluate(
            """() => {
            document.querySelectorAll('details').forEach(d => { d.open = true; });
            return [...document.querySelectorAll('table')]
              .filter(t => t.getBoundingClientRect().width > t.parentElement.clientWidth + 1)
              .map(t => `${t.closest('section')?.id}: ${Math.round(
                t.getBoundingClientRect().width)} px in ${t.parentElement.clientWidth} px`);
            }"""
        )
    )


async def _grave_violations(page: Page) -> list[str]:
    results = await Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}, {len(v['nodes'])}): {v['nodes'][0]['target']}"
        for v in results.response["violations"]
        if v.get("impact") in GRAVE
    ]


async def _check_on_a_phone(html: Path, kind: str, *, axe: bool) -> None:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = await browser.new_page(viewport=PHONE)
        await page.goto(html.as_uri())
        assert await page.locator("table").count() >= 5, f"the {kind} report has its tables"
        wide = await _tables_wider_than_their_box(page)
        assert wide == [], f"{kind} report: {wide}"
        assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        if axe:  # with every folded part open, as _tables_wider_than_their_box left them
            found = await _grave_violations(page)
            assert found == [], f"{kind} report:\n" + "\n".join(found)
        await browser.close()


async def _series(db: Database) -> str:
    run_id = await write_synthetic_run(
        db, applications=APPLICATIONS, sessions_per_cell=1, llm_repeats=1
    )
    series_of(db, "spring pilot", [run_id])
    return run_id


def _run_report(db: Database, run_id: str, folder: Path) -> Path:
    # Two transcripts per group keep the page small; the tables are the run's all the same.
    return write_report(db, run_id, folder, bootstrap=20, transcripts_per_group=2).html


async def test_a_run_reports_tables_fit_a_phone(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await _series(sqlite_db)
    await _check_on_a_phone(_run_report(sqlite_db, run_id, tmp_path), "run", axe=False)


async def test_a_series_report_fits_a_phone_and_passes_axe(
    sqlite_db: Database, tmp_path: Path
) -> None:
    await _series(sqlite_db)
    report = write_report(sqlite_db, None, tmp_path, bootstrap=20, series="spring pilot")
    await _check_on_a_phone(report.html, "series", axe=True)


@pytest.mark.slow  # axe over the run report's 20,000 elements takes 10-30 s
async def test_a_run_report_passes_axe_on_a_phone(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await _series(sqlite_db)
    await _check_on_a_phone(_run_report(sqlite_db, run_id, tmp_path), "run", axe=True)
