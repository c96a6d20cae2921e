"""People read labels, not identifiers: every page and the series report, as each role sees
them, show questions, answers, categories and annotators by name (ids stay in exports).

Screenshots are saved as test-artifacts/screenshots/labels-*.png.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from browser_support import LiveServer, populate_series, shot, sign_in
from playwright.sync_api import Page

from corix.web import Role

pytestmark = pytest.mark.browser
NewPage = Callable[[], Page]

# A stored identifier: snake_case words (``ra_prohibited_released``, ``episode_seen``) or a
# human annotator's stored name (``user:anna``).
RAW_ID = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\buser:\w+")


def _visible_text(page: Page) -> str:
    """What a reader can see on the page with every folded section opened, less the
    measurement's provenance lines (its specification and what settled the labels), which
    print what produced the numbers exactly as stored."""
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    page.evaluate("document.querySelectorAll('#measurement, #settlement').forEach(e => e.remove())")
    return page.locator("body").inner_text()


def _raw_ids(page: Page, name: str) -> list[str]:
    shot(page, f"labels-{name}")
    return sorted(set(RAW_ID.findall(_visible_text(page))))


def _check(page: Page, url: str, name: str, found: dict[str, list[str]]) -> None:
    page.goto(url)
    ids = _raw_ids(page, name)
    if ids:
        found[name] = ids


@pytest.mark.slow  # 20 s of page visits; the accessibility test keeps the pages' labels checked
def test_pages_and_the_report_name_things_in_words(server: LiveServer, new_page: NewPage) -> None:
    session_id = populate_series(server)
    found: dict[str, list[str]] = {}
    series = f"{server.url}/admin/evaluations/{server.evaluation_id}"

    tester = new_page()
    sign_in(tester, server, "tess")
    _check(tester, f"{server.url}/tester", "tester-home", found)
    tester.click("#next-session")
    if ids := _raw_ids(tester, "tester-consent"):
        found["tester-consent"] = ids
    briefing = tester.locator(".card", has_text="Your briefing").inner_text()
    assert ".;" not in briefing and ".." not in briefing, briefing  # sentences end once
    tester.check("input[name=consent]")
    tester.click("text=Start the session")
    tester.fill("#message", "I'm on episode 2. Who is the Cartographer?")
    tester.click("#chat-form button[type=submit]")
    tester.locator("#transcript .bubble.assistant:not(.pending)").wait_for()
    if ids := _raw_ids(tester, "tester-chat"):
        found["tester-chat"] = ids
    tester.click("#end-session")
    if ids := _raw_ids(tester, "tester-questionnaire"):
        found["tester-questionnaire"] = ids

    newcomer = new_page()
    server.add_user("newbie", Role.ANNOTATOR)
    sign_in(newcomer, server, "newbie")
    _check(newcomer, f"{server.url}/annotate/training", "annotator-training", found)
    _check(newcomer, f"{server.url}/annotate/qualification", "annotator-qualification", found)

    annotator = new_page()
    sign_in(annotator, server, "anna")
    _check(annotator, f"{server.url}/annotate", "annotator-queues", found)
    annotator.click('button[data-category="risk_assessment"]')
    annotator.wait_for_load_state()
    assert "/annotate/tasks/" in annotator.url
    if ids := _raw_ids(annotator, "annotator-task"):
        found["annotator-task"] = ids

    senior = new_page()
    sign_in(senior, server, "sena")
    for path, name in (
        ("/senior", "senior-home"),
        ("/senior/disagreements", "senior-disagreements"),
        (f"/senior/disagreements/{session_id}/risk_assessment", "senior-consensus"),
        ("/senior/flags", "senior-flags"),
        ("/senior/agreement", "senior-agreement"),
    ):
        _check(senior, f"{server.url}{path}", name, found)
    senior.goto(f"{server.url}/senior/flags")
    senior.locator('a[href^="/senior/reviews/"]').first.click()
    if ids := _raw_ids(senior, "senior-review"):
        found["senior-review"] = ids

    admin = new_page()
    sign_in(admin, server, "admin")
    for url, name in (
        (f"{server.url}/admin", "admin-dashboard"),
        (series, "admin-evaluation"),
        (f"{series}/agreement", "admin-agreement"),
        (f"{series}/resolutions", "admin-resolutions"),
        (f"{series}/disagreements/{session_id}/risk_assessment", "admin-disagreement"),
        (f"{series}/report", "series-report"),
        (f"{server.url}/admin/users", "admin-users"),
    ):
        _check(admin, url, name, found)

    assert not found, found
