"""Every page at 390 px (a phone held upright): nothing wider than the screen.

Screenshots are saved as test-artifacts/screenshots/phone-*.png.
"""

from __future__ import annotations

import pytest
from browser_support import LiveServer, gold_answers, shot, sign_in, store_dialogue
from playwright.sync_api import Browser, Page, expect

from corix.web import Role
from corix.web.services.annotation_forms import checked_answers

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}


def _phone_page(chromium: Browser) -> Page:
    context = chromium.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True)
    context.set_default_timeout(10_000)
    return context.new_page()


def _fits(page: Page, name: str) -> None:
    """The page scrolls only vertically: its content is no wider than the screen."""
    shot(page, f"phone-{name}")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{name}: {width}px wide at {PHONE['width']}px"


def _populate(server: LiveServer) -> str:
    """A series with a finished session, two disagreeing passes and an open assignment."""
    state = server.state
    tester = server.add_user("tess", Role.RED_TEAMER)
    session_id = store_dialogue(
        server,
        [("I'm on episode 2. Who is the Cartographer?", "The Cartographer is Vera Calloway.")],
        tester=tester,
    )
    state.assigner.assign_testers(server.evaluation_id, [tester], per_tester=2, seed=0)
    ids = {
        name: server.add_user(name, role)
        for name, role in (("anna", Role.ANNOTATOR), ("otto", Role.ANNOTATOR))
    }
    server.add_user("sena", Role.SENIOR_ANNOTATOR)
    server.add_user("admin", Role.ADMIN)
    senior = next(u.id for u in state.accounts.users() if u.username == "sena")
    state.assigner.assign_annotators(
        server.evaluation_id, [*ids.values(), senior], ["risk_assessment"]
    )
    for name, verdict in (("anna", "yes"), ("otto", "no")):
        user = state.accounts.user_for_session(state.accounts.open_session(ids[name]))
        assert user is not None
        state.qualification.draw(user)
        assert state.qualification.submit(user, gold_answers(server)).passed
        (queue,) = state.queue.queues(user)
        token = state.queue.claim_next(user, queue.id)
        assert token is not None
        answers = {"a:ra_prohibited_released": verdict, "a:ra_permitted_withheld": "no"}
        if verdict == "yes":
            answers |= {
                "a:ra_user_induced": "yes",
                "a:ra_risk_type": "data_privacy",
                "a:ra_outcome": "negative",
            }
        parsed = checked_answers(state.schema, state.schema.screening_category, answers, 1)
        state.queue.submit(user, token, parsed, flagged=True, note=f"{name}'s long note " * 8)
    # A second dialogue, so an annotator has one left to open.
    store_dialogue(
        server, [("Recap episode 1?", "Maren finds the lighthouse dark.")], tester=tester
    )
    return session_id


def test_every_page_fits_a_phone(server: LiveServer, chromium: Browser) -> None:
    disagreement = _populate(server)
    evaluation = f"/admin/evaluations/{server.evaluation_id}"

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
        ("/annotate/qualification", "annotator-qualification"),
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
    page.click('button[data-category="risk_assessment"]')
    expect(page.locator('input[name="a:ra_user_induced"]').first).to_be_hidden()
    _fits(page, "annotator-task")
    submit = page.locator("#submit-pass").bounding_box()
    assert submit is not None and submit["x"] + submit["width"] <= PHONE["width"]
    page.context.close()

    page = _phone_page(chromium)
    sign_in(page, server, "admin")
    for path, name in (
        ("/admin", "admin-dashboard"),
        (evaluation, "admin-evaluation"),
        (f"{evaluation}/agreement", "admin-agreement"),
        ("/admin/users", "admin-users"),
    ):
        page.goto(f"{server.url}{path}")
        _fits(page, name)
    page.context.close()
