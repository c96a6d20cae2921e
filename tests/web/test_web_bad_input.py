"""Bad input gets a clear message and leaves nothing half-stored."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from web_support import (
    FIELD_TEST_ANSWERS,
    PASSWORD,
    Browser,
    World,
    build_world,
    finish_session,
    say,
    session_of,
    start_next_session,
    stored_turns,
)

from corix.storage import Database, questionnaire_answers
from corix.web import Role
from corix.web.services.clock import utcnow

MakeBrowser = Callable[[], Browser]


def _turns(world: World, token: str) -> int:
    """The turns stored of felix's session (the only one in these tests)."""
    return len(stored_turns(world, token))


def _answers(world: World, token: str) -> int:
    return len(questionnaire_answers(world.state.db, [session_of(world, token)]))


def _accounts(world: World) -> int:
    return len(world.state.accounts.users())


async def _in_session(world: World, browser: MakeBrowser) -> tuple[Browser, str]:
    world.assign_tester("felix")
    b = browser()
    await b.login("felix")
    return b, await start_next_session(b)


async def test_empty_and_oversized_messages_are_refused(world: World, browser: MakeBrowser) -> None:
    b, token = await _in_session(world, browser)
    empty = await say(b, token, "   \n ", 0)
    assert empty.status_code == 422
    assert empty.json() == {"error": "type a message before sending", "at_limit": False}
    limit = world.state.settings.max_message_chars
    too_long = await say(b, token, "x" * (limit + 1), 0)
    assert too_long.status_code == 422
    assert f"limited to {limit} characters" in too_long.json()["error"]
    # Without JavaScript the chat page comes back with the message and the draft kept.
    page = await b.post(f"/tester/a/{token}/messages", {"message": "y" * (limit + 5), "turn": 0})
    assert page.status_code == 422
    assert page.text.count(f"Messages are limited to {limit} characters") == 1
    assert "y" * (limit + 5) in page.text
    assert _turns(world, token) == 0


async def test_a_huge_request_body_is_refused_before_it_is_read(
    world: World, browser: MakeBrowser
) -> None:
    b, token = await _in_session(world, browser)
    response = await say(b, token, "z" * 300_000, 0)
    assert response.status_code == 413
    assert _turns(world, token) == 0


async def test_a_double_submitted_message_is_stored_once(
    world: World, browser: MakeBrowser
) -> None:
    b, token = await _in_session(world, browser)
    first = await say(b, token, "Recap episode 1 please, I've seen episode 2.", 0)
    second = await say(b, token, "Recap episode 1 please, I've seen episode 2.", 0)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert _turns(world, token) == 1
    # A different message claiming an old turn index is a stale page, not a duplicate.
    stale = await say(b, token, "Something else", 0)
    assert stale.status_code == 409
    assert "moved on" in stale.json()["error"]
    assert _turns(world, token) == 1


async def test_ending_needs_a_turn_and_a_second_end_is_harmless(
    world: World, browser: MakeBrowser
) -> None:
    b, token = await _in_session(world, browser)
    refused = await b.post(f"/tester/a/{token}/end")
    assert refused.status_code == 409
    assert "send at least one message" in refused.text.lower()
    await say(b, token, "Hello there, I'm on episode 1.", 0)
    assert (await b.post(f"/tester/a/{token}/end")).status_code == 303
    again = await b.post(f"/tester/a/{token}/end")
    assert again.headers["location"] == f"/tester/a/{token}/questionnaire"
    late = await say(b, token, "one more?", 1)
    assert late.status_code == 409
    assert _turns(world, token) == 1


async def test_the_turn_limit_is_enforced(sqlite_db: Database) -> None:
    world = build_world(sqlite_db, max_turns=2)
    world.assign_tester("felix")
    b = Browser(world.app)
    try:
        await b.login("felix")
        token = await start_next_session(b)
        assert (await say(b, token, "I'm on episode 2. Hi!", 0)).status_code == 200
        assert (await say(b, token, "What happened in episode 1?", 1)).status_code == 200
        third = await say(b, token, "And episode 2?", 2)
        assert third.status_code == 409
        assert "limit of 2 messages" in third.json()["error"]
        assert third.json()["at_limit"] is True
        page = await b.get(f"/tester/a/{token}/chat")
        assert "You have reached the limit of 2 messages" in page.text
        assert 'id="chat-form"' not in page.text
        # Without the script, a refused form shows the limit once, and no Send button.
        refused = await b.post(f"/tester/a/{token}/messages", {"message": "More?", "turn": 2})
        assert refused.status_code == 409
        assert refused.text.count("limit of 2 messages") == 1
        assert ">Send<" not in refused.text
    finally:
        await b.aclose()
        await world.state.live.close()


async def test_invalid_questionnaire_answers_store_nothing(
    world: World, browser: MakeBrowser
) -> None:
    b, token = await _in_session(world, browser)
    await say(b, token, "I've watched episode 3. Recap episode 3?", 0)
    answers = {**FIELD_TEST_ANSWERS, "q_helpful": "6", "q_trust": ""}
    response = await finish_session(b, token, answers)
    assert response.status_code == 422
    assert "choose a point from 1 to 5" in response.text
    assert "please answer this question" in response.text
    assert 'value="5" checked' in response.text  # valid answers are kept in the form
    assert _answers(world, token) == 0

    fixed = await b.post(
        f"/tester/a/{token}/questionnaire",
        {f"q:{item}": value for item, value in FIELD_TEST_ANSWERS.items()},
    )
    assert fixed.headers["location"] == f"/tester/a/{token}/summary"
    # Submitting the same form again (back button, double click) stores nothing more.
    twice = await b.post(
        f"/tester/a/{token}/questionnaire",
        {f"q:{item}": value for item, value in FIELD_TEST_ANSWERS.items()},
    )
    assert twice.headers["location"] == "/tester?notice=questionnaire_done"
    assert _answers(world, token) == len(FIELD_TEST_ANSWERS)


async def test_consent_is_required(world: World, browser: MakeBrowser) -> None:
    world.assign_tester("felix")
    b = browser()
    await b.login("felix")
    token = world.state.testers.assignments(world.user("felix"))[0].token
    await b.get(f"/tester/a/{token}")
    refused = await b.post(f"/tester/a/{token}/start", {})
    assert refused.status_code == 422
    assert "agree to take part" in refused.text
    assert world.state.testers.assignments(world.user("felix"))[0].status == "assigned"


async def test_forms_without_a_valid_csrf_token_are_refused(
    world: World, browser: MakeBrowser
) -> None:
    b, token = await _in_session(world, browser)
    missing = await b.post(f"/tester/a/{token}/messages", {"message": "hi"}, csrf=False)
    forged = await b.post(f"/tester/a/{token}/messages", {"message": "hi", "csrf_token": "0" * 64})
    assert missing.status_code == forged.status_code == 403
    assert "this form has expired" in forged.text.lower()
    assert _turns(world, token) == 0


async def test_expired_used_and_unknown_invitations(world: World, browser: MakeBrowser) -> None:
    accounts = world.state.accounts
    token = accounts.invite(Role.ANNOTATOR, created_by=world.user("admin").id)
    b = browser()
    page = await b.get(f"/invite/{token}")
    assert "Annotator" in page.text

    mismatch = await b.post(
        f"/invite/{token}",
        {"username": "newbie", "password": PASSWORD, "password_again": PASSWORD + "!"},
    )
    assert mismatch.status_code == 422 and "the two passwords differ" in mismatch.text.lower()
    weak = await b.post(
        f"/invite/{token}",
        {"username": "Bad Name!", "password": "short", "password_again": "short"},
    )
    assert weak.status_code == 422 and "at least 10 characters" in weak.text
    assert _accounts(world) == len(world.users)

    accepted = await b.post(
        f"/invite/{token}",
        {"username": "newbie", "password": PASSWORD, "password_again": PASSWORD},
    )
    assert accepted.headers["location"] == "/annotate?notice=welcome"
    other = browser()
    reused = await other.get(f"/invite/{token}")
    assert reused.status_code == 410 and "already been used" in reused.text
    resubmitted = await other.post(
        f"/invite/{token}",
        {"username": "second", "password": PASSWORD, "password_again": PASSWORD},
    )
    assert resubmitted.status_code == 410
    assert _accounts(world) == len(world.users) + 1

    lasts = timedelta(days=world.state.settings.invitation_days)
    accounts.clock = lambda: utcnow() - lasts - timedelta(minutes=1)  # invited that long ago
    stale = accounts.invite(Role.FIELD_TESTER, created_by=None)
    accounts.clock = utcnow
    expired = await other.get(f"/invite/{stale}")
    assert expired.status_code == 410 and "has expired" in expired.text
    unknown = await other.get("/invite/not-a-real-token")
    assert unknown.status_code == 404 and "not valid" in unknown.text


async def test_ids_no_column_can_hold_name_no_page(world: World, browser: MakeBrowser) -> None:
    # Past 2**63 SQLite's driver overflows and PostgreSQL's integer is out of range: both
    # were 500s. Every such id, and a negative or non-numeric one, is simply not a page.
    admin, senior = browser(), browser()
    await admin.login("admin")
    await senior.login("sena")
    huge = "99999999999999999999999"
    for bad in (huge, "-1", "0", "abc"):
        page = await senior.get(f"/senior/reviews/{bad}")
        assert page.status_code == 404, (bad, page.status_code)
        retired = await admin.post(f"/admin/applications/{bad}/retire", {})
        assert retired.status_code == 404, (bad, retired.status_code)
        active = await admin.post(f"/admin/users/{bad}/active", {"active": "false"})
        assert active.status_code == 404, (bad, active.status_code)
