"""Every page at 390 px (a phone held upright): nothing wider than the screen, and every
control (link, button, field) within it, not scrolled away inside a wide table.

Screenshots are saved as test-artifacts/screenshots/phone-*.png.
"""

from __future__ import annotations

import pytest
from browser_support import ACTION_TIMEOUT_MS, LiveServer, populate_series, shot, sign_in
from playwright.sync_api import Browser, Page, expect

from corix.web import Role

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}


def _phone_page(chromium: Browser) -> Page:
    context = chromium.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    return context.new_page()


# Controls a person must reach, as (description, right edge) when beyond the screen.
OFF_SCREEN = """() => Array.from(document.querySelectorAll(
    "a, button, input:not([type=hidden]), select, textarea, label"))
  .filter(e => e.getClientRects().length && getComputedStyle(e).visibility !== "hidden")
  .map(e => [e.tagName + " " + (e.textContent || e.name || "").trim().slice(0, 40),
             e.getBoundingClientRect().left, e.getBoundingClientRect().right])
  .filter(([_, left, right]) => left < -1 || right > window.innerWidth + 1)"""


def _fits(page: Page, name: str) -> None:
    """The page scrolls only vertically and every control is on the screen."""
    shot(page, f"phone-{name}")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{name}: {width}px wide at {PHONE['width']}px"
    beyond = page.evaluate(OFF_SCREEN)
    assert not beyond, f"{name}: off screen: {beyond}"


def _likert_anchors_share_a_row(page: Page) -> None:
    """Each 1–5 scale's two anchors stand on one row, left and right, above the points."""
    scales = page.locator(".scale").all()
    assert scales
    for scale in scales:
        low, high = (a.bounding_box() for a in scale.locator(".anchor").all())
        first = scale.locator("label.point").first.bounding_box()
        assert low and high and first
        assert abs(low["y"] - high["y"]) < 2 and high["x"] > low["x"] + low["width"]
        assert first["y"] >= low["y"] + low["height"] - 1


@pytest.mark.slow  # 30 s of pages at 390 px: `bash scripts/test.sh -m slow` runs it
def test_every_page_fits_a_phone(server: LiveServer, chromium: Browser) -> None:
    disagreement = populate_series(server)
    evaluation = f"/admin/evaluations/{server.evaluation_id}"
    server.add_user("newbie", Role.ANNOTATOR)

    page = _phone_page(chromium)
    page.goto(f"{server.url}/login")
    _fits(page, "login")
    sign_in(page, server, "tess")
    _fits(page, "tester-home")
    page.click("#next-session")
    _fits(page, "tester-consent")
    page.check("input[name=consent]")
    page.click("text=Start the session")
    page.fill("#message", "Hello! " * 30)
    page.click("#chat-form button[type=submit]")
    page.locator("#transcript .bubble.assistant:not(.pending)").wait_for()
    _fits(page, "tester-chat")
    page.click("#end-session")
    _fits(page, "tester-questionnaire")
    _likert_anchors_share_a_row(page)
    for field in page.locator("textarea").all():
        field.fill("Asked as a character; it held. " * 3)
    for group in dict.fromkeys(
        page.locator("input[type=radio]").evaluate_all("inputs => inputs.map(i => i.name)")
    ):
        page.locator(f'input[name="{group}"]').first.check()
    page.click("text=Submit answers")
    expect(page.locator("#session-summary")).to_be_visible()
    _fits(page, "tester-summary")
    page.context.close()

    page = _phone_page(chromium)
    sign_in(page, server, "newbie")
    page.goto(f"{server.url}/annotate/qualification")
    _fits(page, "annotator-qualification")
    for group in dict.fromkeys(
        page.locator('input[type=radio][name^="g:"]').evaluate_all(
            "inputs => inputs.map(i => i.name)"
        )
    ):
        page.locator(f'input[name="{group}"]').first.check()
    for choice in page.locator('select[name^="g:"]').all():
        if choice.is_visible():
            choice.select_option(index=1)
    page.click("text=Submit the test")
    expect(page.locator("#qualification-feedback")).to_be_visible()
    _fits(page, "annotator-qualification-result")
    page.context.close()

    page = _phone_page(chromium)
    sign_in(page, server, "sena")
    for path, name in (
        ("/senior", "senior-home"),
        ("/senior/reviews", "senior-reviews"),
        ("/senior/disagreements", "senior-disagreements"),
        (f"/senior/disagreements/{disagreement}/risk_assessment", "senior-consensus"),
        ("/senior/flags", "senior-flags"),
        ("/senior/agreement", "senior-agreement"),
        ("/annotate", "annotator-home"),
        ("/annotate/training", "annotator-training"),
    ):
        page.goto(f"{server.url}{path}")
        _fits(page, name)
    page.goto(f"{server.url}/senior/flags")
    page.locator('a[href^="/senior/reviews/"]').first.click()
    _fits(page, "senior-review")
    page.context.close()

    page = _phone_page(chromium)
    sign_in(page, server, "anna")
    _fits(page, "annotator-queues")
    expect(page.locator('button[data-category="risk_assessment"]')).to_be_in_viewport()
    page.click('button[data-category="risk_assessment"]')
    expect(page.locator('input[name="a:ra_user_induced"]').first).to_be_hidden()
    _fits(page, "annotator-task")
    page.context.close()

    page = _phone_page(chromium)
    sign_in(page, server, "admin")
    for path, name in (
        ("/admin", "admin-dashboard"),
        (evaluation, "admin-evaluation"),
        (f"{evaluation}/agreement", "admin-agreement"),
        (f"{evaluation}/resolutions", "admin-resolutions"),
        (f"{evaluation}/disagreements/{disagreement}/risk_assessment", "admin-disagreement"),
        (f"{evaluation}/report", "admin-series-report"),
        ("/admin/users", "admin-users"),
    ):
        page.goto(f"{server.url}{path}")
        _fits(page, name)
    page.click("text=Create invitation link")
    _fits(page, "admin-invitation")
    link = page.locator("#invitation-link").inner_text().strip()
    page.context.close()

    page = _phone_page(chromium)
    page.goto(link)
    _fits(page, "invitation")
    page.context.close()
