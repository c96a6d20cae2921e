"""axe-core on the pages people use: no serious or critical violation.

axe-core runs inside Debian's chromium (bundled by axe-playwright-python); the rules are
WCAG 2.x A and AA plus axe's best practices, as axe's defaults.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from axe_playwright_python.sync_playwright import Axe
from browser_support import LiveServer, populate_series, sign_in
from playwright.sync_api import Page

from corix.web import Role

pytestmark = pytest.mark.browser
NewPage = Callable[[], Page]
GRAVE = ("serious", "critical")


def _grave_violations(page: Page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}, {len(v['nodes'])}): {v['nodes'][0]['target']}"
        for v in results.response["violations"]
        if v.get("impact") in GRAVE
    ]


def test_the_series_report_has_no_serious_violation(server: LiveServer, new_page: NewPage) -> None:
    populate_series(server)
    server.add_user("boss", Role.ADMIN)
    page = new_page()
    sign_in(page, server, "boss")
    # Building the report measures the whole series: slower than a page.
    page.goto(f"{server.url}/admin/evaluations/{server.evaluation_id}/report", timeout=120_000)
    found = _grave_violations(page)
    assert found == [], "\n".join(found)


def test_the_admin_series_page_has_no_serious_violation(
    server: LiveServer, new_page: NewPage
) -> None:
    populate_series(server)
    server.add_user("boss", Role.ADMIN)
    page = new_page()
    sign_in(page, server, "boss")
    page.goto(f"{server.url}/admin/evaluations/{server.evaluation_id}")
    found = _grave_violations(page)
    assert found == [], "\n".join(found)
