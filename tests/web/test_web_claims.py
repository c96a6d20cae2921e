"""Annotators' claims over HTTP: the time a series sets, a claim that ran out, and the
queue's last dialogue.

A claim that ran out used to vanish: the annotator coming back met a bare 404, and a
submission was answered "saved" while nothing was stored.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from web_support import Browser, World, complete_session, qualify

from corix.storage import load_passes
from corix.storage.web import queues, transaction
from corix.web.services.clock import utcnow

MakeBrowser = Callable[[], Browser]
NO = {"a:ra_prohibited_released": "no", "a:ra_permitted_withheld": "no"}
ONE_PASS = pytest.mark.parametrize("world", [{"passes_per_item": 1}], indirect=True)


async def _annotators(world: World, browser: MakeBrowser, *names: str) -> list[Browser]:
    ids = [world.user(name).id for name in names]
    world.state.assigner.assign_annotators(world.evaluation_id, ids, ["risk_assessment"])
    signed_in = []
    for name in names:
        b = browser()
        await b.login(name)
        await qualify(world, b)
        signed_in.append(b)
    return signed_in


async def _claim(world: World, b: Browser, name: str) -> str:
    queue_id = world.state.queue.queues(world.user(name))[0].id
    claimed = await b.post(f"/annotate/queues/{queue_id}/next")
    location: str = claimed.headers["location"]
    assert location.startswith("/annotate/tasks/"), location
    return location.rsplit("/", 1)[1]


def _later(world: World, minutes: float) -> None:
    """Move the claims' clock ``minutes`` on."""
    world.state.queue.clock = lambda: utcnow() + timedelta(minutes=minutes)


def _stored_passes(world: World) -> list[str]:
    return [made.annotator for made in load_passes(world.state.db)]


@pytest.mark.parametrize(
    "world", [{}, {"backend": "postgres"}], ids=["sqlite", "postgres"], indirect=True
)
async def test_a_claim_that_ran_out_is_claimed_again_when_its_dialogue_is_still_free(
    world: World, browser: MakeBrowser
) -> None:
    await complete_session(world, "felix", ["I'm on episode 2. Recap episode 1?"])
    anna, otto = await _annotators(world, browser, "anna", "otto")
    token = await _claim(world, anna, "anna")
    assert (await anna.get(f"/annotate/tasks/{token}")).status_code == 200
    _later(world, 61)  # anna is away longer than a claim lasts; otto's claim takes hers back
    await _claim(world, otto, "otto")
    with transaction(world.state.db) as tx:
        assert queues.task(tx, token) is None
    # anna comes back to her open page: two passes per dialogue, one place is still free.
    page = await anna.get(f"/annotate/tasks/{token}")
    assert page.status_code == 200 and 'id="claim-lost"' not in page.text
    saved = await anna.post(f"/annotate/tasks/{token}", NO)
    assert saved.headers["location"] == "/annotate?notice=pass_saved"
    assert _stored_passes(world) == ["user:anna"]
    with transaction(world.state.db) as tx:
        task = queues.task(tx, token)
    assert task is not None and task.status == "done" and task.pass_no == 2  # otto holds 1


@ONE_PASS
async def test_a_claim_taken_by_others_is_said_plainly_and_the_answers_are_kept(
    world: World, browser: MakeBrowser
) -> None:
    await complete_session(world, "felix", ["I'm on episode 2. Recap episode 1?"])
    anna, otto = await _annotators(world, browser, "anna", "otto")
    token = await _claim(world, anna, "anna")
    _later(world, 61)
    otto_token = await _claim(world, otto, "otto")  # the one place is otto's now
    typed = {**NO, "note": "I spent a while on this one"}
    refused = await anna.post(f"/annotate/tasks/{token}", typed)
    assert refused.status_code == 409
    assert "held for you for 60 minutes" in refused.text
    assert "submit them again" in refused.text and "Submit again" in refused.text
    assert 'value="no" checked' in refused.text and "I spent a while on this one" in refused.text
    assert _stored_passes(world) == []
    page = await anna.get(f"/annotate/tasks/{token}")  # coming back later: said, no 404
    assert page.status_code == 200 and 'id="claim-lost"' in page.text
    # otto gives it back: anna's resubmission is stored.
    await otto.post(f"/annotate/tasks/{otto_token}/skip")
    saved = await anna.post(f"/annotate/tasks/{token}", typed)
    assert saved.headers["location"] == "/annotate?notice=pass_saved"
    assert _stored_passes(world) == ["user:anna"]


@ONE_PASS
async def test_the_last_dialogue_of_a_queue_claims_nothing_more(
    world: World, browser: MakeBrowser
) -> None:
    for tester, text in (("felix", "Recap episode 1?"), ("fay", "Who is Tobias?")):
        await complete_session(world, tester, [text])
    anna, otto = await _annotators(world, browser, "anna", "otto")
    otto_token = await _claim(world, otto, "otto")  # otto holds one, then walks away
    token = await _claim(world, anna, "anna")
    page = await anna.get(f"/annotate/tasks/{token}")
    # The form as the page sends it: "go straight on" only if the page ticks it.
    ticked = 'name="advance" value="yes" checked' in page.text
    _later(world, 61)  # otto's claim runs out while anna works on the last one
    form = {**NO, "advance": "yes"} if ticked else NO
    done = await anna.post(f"/annotate/tasks/{token}", form)
    assert done.headers["location"] == "/annotate?notice=pass_saved"
    with transaction(world.state.db) as tx:
        held = queues.task(tx, otto_token)
        anna_open = queues.open_task_token(
            tx, world.user("anna").id, world.evaluation_id, "risk_assessment", status="open"
        )
    assert anna_open is None  # anna claimed nothing more, and otto's dialogue is still his
    assert held is not None and held.status == "open"
    assert 'id="last-in-queue"' in page.text  # the page said it was the last


async def test_a_page_with_more_waiting_offers_to_go_straight_on(
    world: World, browser: MakeBrowser
) -> None:
    for tester, text in (("felix", "Recap episode 1?"), ("fay", "Who is Tobias?")):
        await complete_session(world, tester, [text])
    (anna,) = await _annotators(world, browser, "anna")
    token = await _claim(world, anna, "anna")
    page = await anna.get(f"/annotate/tasks/{token}")
    assert 'name="advance" value="yes" checked' in page.text
    assert 'id="last-in-queue"' not in page.text
    went_on = await anna.post(f"/annotate/tasks/{token}", {**NO, "advance": "yes"})
    assert went_on.headers["location"].startswith("/annotate/tasks/")


async def test_the_claim_time_is_a_setting_of_the_series(
    world: World, browser: MakeBrowser
) -> None:
    await complete_session(world, "felix", ["I'm on episode 2. Recap episode 1?"])
    (anna,) = await _annotators(world, browser, "anna")
    queue, evaluation_id = world.state.queue, world.evaluation_id
    assert queue.claim_minutes(evaluation_id) == 60  # the server's default, unchanged
    admin = browser()
    await admin.login("admin")
    url = f"/admin/evaluations/{evaluation_id}"
    await admin.get(url)
    for wrong in ("0", "20000", "nan"):
        refused = await admin.post(f"{url}/claim-time", {"claim_minutes": wrong})
        assert refused.status_code == 422, wrong
    saved = await admin.post(f"{url}/claim-time", {"claim_minutes": "5"})
    assert saved.headers["location"] == f"{url}?notice=claim_time_saved"
    page = (await admin.get(url)).text
    assert "A claim expires after 5 minutes" in page and 'name="claim_minutes"' in page
    await _claim(world, anna, "anna")
    _later(world, 6)
    assert queue.open_claims(evaluation_id) == (1, 1)  # past the series' 5 minutes
    await admin.post(f"{url}/claim-time", {"claim_minutes": ""})  # back to the default
    assert queue.claim_minutes(evaluation_id) == 60
    assert queue.open_claims(evaluation_id) == (1, 0)


@ONE_PASS
async def test_an_old_page_of_a_dialogue_claimed_again_leads_to_the_new_claim(
    world: World, browser: MakeBrowser
) -> None:
    await complete_session(world, "felix", ["I'm on episode 2. Recap episode 1?"])
    (anna,) = await _annotators(world, browser, "anna")
    first = await _claim(world, anna, "anna")
    _later(world, 61)
    second = await _claim(world, anna, "anna")  # her own claim, taken back and given again
    assert second != first
    moved = await anna.get(f"/annotate/tasks/{first}")
    assert moved.headers["location"] == f"/annotate/tasks/{second}"
    saved = await anna.post(f"/annotate/tasks/{first}", NO)  # the old tab's form
    assert saved.headers["location"] == "/annotate?notice=pass_saved"
    assert _stored_passes(world) == ["user:anna"]
