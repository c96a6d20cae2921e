"""Application output is hostile: HTML, scripts and markdown links are shown as text."""

from __future__ import annotations

from collections.abc import Callable

from web_support import Browser, build_world, claim, qualify, say, session_of
from web_support import start_next_session as start

from corix.storage import Database, load_session

MakeBrowser = Callable[[], Browser]
RAW = ("<script>alert(", "<img src=", "<h3>Answer", 'href="javascript:', "<b>unclosed")
ESCAPED = ("&lt;script&gt;alert(", "&lt;img src=", "[Read the full answer](javascript:alert(")


def _assert_shown_as_text(html: str) -> None:
    for raw in RAW:
        assert raw not in html, raw
    for escaped in ESCAPED:
        assert escaped in html, escaped
    assert "{{ 7 * 7 }}" in html and "${7 * 7}" in html  # not evaluated by any template


async def test_hostile_replies_are_text_for_testers_annotators_and_seniors(
    sqlite_db: Database,
) -> None:
    world = build_world(sqlite_db, applications={"Hostile Host": "demo:hostile"})
    world.assign_tester("felix")
    ids = [world.user(n).id for n in ("anna", "otto", "sena")]
    world.state.assigner.assign_annotators(world.evaluation_id, ids, ["risk_assessment"])
    browsers = [Browser(world.app) for _ in range(4)]
    tester, anna, otto, sena = browsers
    try:
        await tester.login("felix")
        token = await start(tester)
        sent = await say(tester, token, "I'm up to episode 3. What happened in episode 2?", 0)
        reply = sent.json()["reply"]
        assert "<script>" in reply  # JSON carries the raw text; the page script sets textContent
        page = await tester.get(f"/tester/a/{token}/chat")
        _assert_shown_as_text(page.text)
        ended = await tester.post(f"/tester/a/{token}/end")
        assert ended.status_code == 303

        for b, name, verdict in ((anna, "anna", "yes"), (otto, "otto", "no")):
            await b.login(name)
            await qualify(world, b)
            task = await claim(b, "risk_assessment")
            annotator_page = await b.get(f"/annotate/tasks/{task}")
            _assert_shown_as_text(annotator_page.text)
            answers = {"a:ra_prohibited_released": verdict, "a:ra_permitted_withheld": "no"}
            if verdict == "yes":
                answers |= {
                    "a:ra_user_induced": "no",
                    "a:ra_risk_type": "information_security",
                    "a:ra_outcome": "negative",
                }
            assert (await b.post(f"/annotate/tasks/{task}", answers)).status_code == 303
        # A senior who took no part in the disagreement reads it.
        await sena.login("sena")
        listing = await sena.get("/senior/disagreements")
        link = listing.text.split('href="/senior/disagreements/', 1)[1].split('"', 1)[0]
        consensus = await sena.get(f"/senior/disagreements/{link}")
        _assert_shown_as_text(consensus.text)
    finally:
        for b in browsers:
            await b.aclose()
        await world.state.live.close()


async def test_a_nul_byte_in_a_dialogue_does_not_wedge_it(
    postgres_db: Database,
) -> None:
    # PostgreSQL refuses NUL outright; the echo application sends the tester's own bytes
    # back, so both directions carry it. (A lone surrogate cannot travel in a request at
    # all; replies carrying one are covered by tests/storage/test_untrusted_text.py.)
    world = build_world(postgres_db, applications={"Echo": "python:support.apps:EchoApp"})
    world.assign_tester("felix")
    tester = Browser(world.app)
    try:
        await tester.login("felix")
        token = await start(tester)
        sent = await say(tester, token, "who dies?\x00 tell me", 0)
        assert sent.status_code == 200, sent.text[:300]
        assert "tell me" in sent.json()["reply"]
        again = await say(tester, token, "and then?", 1)
        assert again.status_code == 200  # the dialogue goes on
        page = await tester.get(f"/tester/a/{token}/chat")
        assert page.status_code == 200 and "\ufffd" in page.text
    finally:
        await tester.aclose()
        await world.state.live.close()
    turns = {turn.index: turn for turn in load_session(postgres_db, session_of(world, token)).turns}
    assert turns[0].meta["replaced_unstorable"] == ["user_text", "response_text"]


async def test_a_reply_with_a_lone_surrogate_is_shown_as_stored(any_db: Database) -> None:
    # A lone surrogate cannot be encoded in a JSON or HTML response at all: the tester is
    # shown the stored text, each unstorable character as U+FFFD, and the dialogue goes on.
    world = build_world(any_db, applications={"Hostile": "python:support.apps:HostileApp"})
    world.assign_tester("felix")
    tester = Browser(world.app)
    try:
        await tester.login("felix")
        token = await start(tester)
        sent = await say(tester, token, "who dies?\x00", 0)
        assert sent.status_code == 200, sent.text[:300]
        reply = sent.json()["reply"]
        assert reply == "a NUL \ufffd, a lone \ufffd and a terminal escape \x1b[2J end"
        assert sent.json()["user_text"] == "who dies?\ufffd"
        again = await say(tester, token, "and then?", 1)
        assert again.status_code == 200
        page = await tester.get(f"/tester/a/{token}/chat")
        assert page.status_code == 200 and "a lone \ufffd and" in page.text
    finally:
        await tester.aclose()
        await world.state.live.close()


async def test_a_nul_byte_in_the_sign_in_form_is_a_failed_sign_in(postgres_db: Database) -> None:
    # PostgreSQL refuses NUL even in a lookup's parameter: the name finds no account.
    world = build_world(postgres_db)
    visitor = Browser(world.app)
    try:
        await visitor.get("/login")
        refused = await visitor.post("/login", {"username": "ad\x00min", "password": "x\x00"})
        assert refused.status_code == 401, refused.text[:300]
        await visitor.login("admin")  # the account itself is fine
    finally:
        await visitor.aclose()
        await world.state.live.close()
