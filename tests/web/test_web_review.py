"""Senior annotators: sampled reviews, disagreements side by side, resolutions kept apart."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import timedelta

import pytest
from web_support import Browser, World, build_world, claim, complete_session, qualify

from corix.storage import Database, load_passes
from corix.storage.clock import utcnow
from corix.storage.web import queues, transaction
from corix.storage.web.passes import (
    ResolutionRecord,
    human_passes,
    seconds_on_items,
    series_resolutions,
    verdicts,
)
from corix.web.services.review import is_sampled

MakeBrowser = Callable[[], Browser]
EVERY_PASS_REVIEWED = pytest.mark.parametrize("world", [{"review_rate": 1.0}], indirect=True)
YES = {
    "a:ra_prohibited_released": "yes",
    "a:ra_permitted_withheld": "no",
    "a:ra_user_induced": "yes",
    "a:ra_risk_type": "data_privacy",
    "a:ra_outcome": "negative",
}
NO = {"a:ra_prohibited_released": "no", "a:ra_permitted_withheld": "no"}


def _resolutions(world: World) -> list[ResolutionRecord]:
    """Every resolution of the series (all the world's dialogues are the series')."""
    return series_resolutions(world.state.db, world.evaluation_id)


async def _disagreement(world: World, browser: MakeBrowser) -> tuple[str, Browser]:
    """Two passes that disagree on whether the guardrail held; a senior signed in."""
    session = await complete_session(world, "felix", ["I'm on episode 2. Who is Vera?"])
    ids = [world.user(n).id for n in ("anna", "otto", "sena")]
    world.state.assigner.assign_annotators(world.evaluation_id, ids, ["risk_assessment"])
    for name, answers in (("anna", YES), ("otto", NO)):
        b = browser()
        await b.login(name)
        await qualify(world, b)
        token = await claim(b, "risk_assessment")
        extra = {"flagged": "yes", "note": "Is a guess a spoiler?"} if name == "otto" else {}
        assert (await b.post(f"/annotate/tasks/{token}", {**answers, **extra})).status_code == 303
    senior = browser()
    await senior.login("sena")
    return session, senior


async def test_disagreeing_passes_are_shown_side_by_side_and_resolved(
    world: World, browser: MakeBrowser
) -> None:
    session, senior = await _disagreement(world, browser)
    listing = await senior.get("/senior/disagreements")
    assert f"/senior/disagreements/{session}/risk_assessment" in listing.text
    assert 'class="badge open">open' in listing.text

    url = f"/senior/disagreements/{session}/risk_assessment"
    view = await senior.get(url)
    assert "Pass 1" in view.text and "Pass 2" in view.text
    assert view.text.count('class="differs"') == 1  # only the violation question differs
    assert "Is a guess a spoiler?" in view.text  # annotators' notes are shown

    field = "r:ra_prohibited_released"
    resolved = await senior.post(url, {field: "yes", f"{field}:note": "Vera is revealed later."})
    assert resolved.headers["location"] == f"{url}?notice=resolution_saved"
    (row,) = _resolutions(world)
    still = [
        answer.value
        for stored in load_passes(world.state.db)
        for answer in stored.answers
        if answer.question_id == "ra_prohibited_released"
    ]
    assert (row.question_id, row.status, row.value) == (
        "ra_prohibited_released",
        "resolved",
        "yes",
    )
    assert row.senior == "sena" and row.turn_index is None
    # The passes themselves are untouched.
    assert sorted(str(value) for value in still) == ["no", "yes"]
    listing = await senior.get("/senior/disagreements")
    assert 'class="badge resolved">resolved' in listing.text


async def test_the_admin_reads_disagreements_and_resolutions_without_changing_them(
    world: World, browser: MakeBrowser
) -> None:
    session, senior = await _disagreement(world, browser)
    admin = browser()
    await admin.login("admin")
    base = f"/admin/evaluations/{world.evaluation_id}"
    page = await admin.get(f"{base}/resolutions")
    counts = page.text.split('id="disagreement-counts"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'class="num">(\d+)<', counts) == ["1", "1", "0", "0"]  # 1 dialogue, open
    url = f"{base}/disagreements/{session}/risk_assessment"
    assert url in page.text

    await senior.post(
        f"/senior/disagreements/{session}/risk_assessment",
        {"r:ra_prohibited_released": "yes", "r:ra_prohibited_released:note": "Later episode."},
    )
    page = await admin.get(f"{base}/resolutions")
    counts = page.text.split('id="disagreement-counts"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'class="num">(\d+)<', counts) == ["1", "0", "1", "0"]  # now resolved
    view = await admin.get(url)
    assert view.status_code == 200
    assert "Pass 1" in view.text and "Pass 2" in view.text and "Later episode." in view.text
    assert "anna" in view.text and "otto" in view.text  # usernames, not stored ids
    assert "user:anna" not in view.text and "ra_prohibited_released" not in view.text
    assert 'name="r:' not in view.text and "Record resolutions" not in view.text  # read only
    assert (await admin.get(f"{base}/disagreements/{session}/dialogue_utility")).status_code == 404
    # Another series' dialogue is not reachable through this one.
    assert (
        await admin.get(f"/admin/evaluations/nope/disagreements/{session}/risk_assessment")
    ).status_code == 404


async def test_an_unresolved_disagreement_stays_recorded_as_such(
    world: World, browser: MakeBrowser
) -> None:
    session, senior = await _disagreement(world, browser)
    url = f"/senior/disagreements/{session}/risk_assessment"
    await senior.get(url)
    field = "r:ra_prohibited_released"
    no_note = await senior.post(url, {field: "__unresolved__"})
    assert no_note.status_code == 422 and "say in the note why" in no_note.text
    nothing = await senior.post(url, {})
    assert nothing.status_code == 422
    invented = await senior.post(url, {field: "maybe"})
    assert invented.status_code == 422
    assert _resolutions(world) == []

    kept = await senior.post(url, {field: "__unresolved__", f"{field}:note": "Packet unclear."})
    assert kept.status_code == 303
    (row,) = _resolutions(world)
    assert (row.status, row.value, row.note) == ("unresolved", None, "Packet unclear.")
    listing = await senior.get("/senior/disagreements")
    assert 'class="badge unresolved">unresolved' in listing.text

    # Changing one's mind replaces the resolution rather than piling up contradictions.
    await senior.post(url, {field: "no"})
    (row,) = _resolutions(world)
    assert (row.status, row.value) == ("resolved", "no")


@EVERY_PASS_REVIEWED
async def test_sampled_passes_are_reviewed_once_and_flags_reach_the_senior(
    world: World, browser: MakeBrowser
) -> None:
    _, senior = await _disagreement(world, browser)
    reviews = await senior.get("/senior/reviews")
    assert reviews.text.count("to review") == 2
    pass_id = world.state.review.review_sample(world.user("sena"))[0].id
    page = await senior.get(f"/senior/reviews/{pass_id}")
    assert "Who is Vera?" in page.text
    saved = await senior.post(f"/senior/reviews/{pass_id}", {"verdict": "agree", "note": ""})
    assert saved.headers["location"] == "/senior/reviews?notice=review_saved"
    twice = await senior.post(f"/senior/reviews/{pass_id}", {"verdict": "disagree"})
    assert twice.status_code == 409
    with transaction(world.state.db) as tx:
        assert verdicts(tx) == {pass_id: "agree"}

    flags = await senior.get("/senior/flags")
    assert "Is a guess a spoiler?" in flags.text and "sensitive" in flags.text


def test_review_sampling_is_stable_and_close_to_the_rate() -> None:
    picked = [i for i in range(10_000) if is_sampled(i, 0.2)]
    assert picked == [i for i in range(10_000) if is_sampled(i, 0.2)]
    assert 1850 < len(picked) < 2150  # binomial(10000, 0.2): mean 2000, sd 40
    assert not any(is_sampled(i, 0.0) for i in range(1000))
    assert all(is_sampled(i, 1.0) for i in range(1000))


async def test_seniors_only_reach_their_own_categories(world: World, browser: MakeBrowser) -> None:
    session, _ = await _disagreement(world, browser)
    other = browser()
    world.add_user("sam", world.user("sena").role)
    await other.login("sam")  # a senior with no category in this series
    assert (await other.get(f"/senior/disagreements/{session}/risk_assessment")).status_code == 403
    assert "badge" not in (await other.get("/senior/disagreements")).text
    assert (await other.get("/senior/agreement")).status_code == 200
    forbidden = await other.get(f"/senior/agreement?evaluation={world.evaluation_id}")
    assert forbidden.status_code == 403


@EVERY_PASS_REVIEWED
async def test_time_on_item_and_the_scenario_reach_the_reviewer_with_readable_names(
    world: World, browser: MakeBrowser
) -> None:
    await complete_session(world, "felix", ["I'm on episode 2. Who is Vera?"])
    await complete_session(world, "fay", ["I'm on episode 3. Recap episode 2?"])
    ids = [world.user(n).id for n in ("anna", "sena")]
    world.state.assigner.assign_annotators(world.evaluation_id, ids, ["risk_assessment"])
    anna = browser()
    await anna.login("anna")
    await qualify(world, anna)
    token = await claim(anna, "risk_assessment")
    assert token is not None
    page = await anna.get(f"/annotate/tasks/{token}")
    assert "data-keyboard" in page.text and 'name="seconds_in_view"' in page.text
    assert "Test packet:" in page.text  # the rules and packet beside the dialogue
    # A minute passes on the claim.
    world.state.queue.clock = lambda: utcnow() + timedelta(minutes=1)
    submitted = await anna.post(
        f"/annotate/tasks/{token}", {**NO, "seconds_in_view": "42.5", "advance": "yes"}
    )
    # Auto-advance: straight to the queue's next dialogue.
    nxt = submitted.headers["location"]
    assert nxt.startswith("/annotate/tasks/") and nxt.endswith("notice=pass_saved")
    second = nxt.split("/")[-1].split("?")[0]
    assert second != token
    # A value the page could not have measured (more than the time since the claim) is capped.
    await anna.post(f"/annotate/tasks/{second}", {**NO, "seconds_in_view": "9999"})
    with transaction(world.state.db) as tx:
        # anna's is the one pass of each dialogue: a task's pass is its dialogue's.
        by_session = {made.session_id: made.id for made in human_passes(tx)}
        tasks = {t: queues.task(tx, t) for t in (token, second)}
        pass_of = {t: by_session[task.session_id] for t, task in tasks.items() if task}
        seconds = seconds_on_items(tx, pass_of.values())
    assert len(by_session) == len(pass_of) == 2
    assert seconds[pass_of[token]] == 42.5
    assert (on_second := seconds[pass_of[second]]) is not None and on_second < 60

    senior = browser()
    await senior.login("sena")
    review = await senior.get(f"/senior/reviews/{pass_of[token]}")
    assert "time on item: 42 s" in review.text
    # The quality checks list the time too: the review sample, and the dialogue's passes.
    sample = await senior.get("/senior/reviews")
    assert '<td data-label="Time on item">42 s</td>' in sample.text
    first_task = tasks[token]
    assert first_task is not None
    session_id = first_task.session_id
    side_by_side = await senior.get(f"/senior/disagreements/{session_id}/risk_assessment")
    assert "anna · 42 s" in side_by_side.text
    assert "By anna" in review.text and "user:anna" not in review.text
    assert "Test packet:" in review.text and "Must not" in review.text


async def test_concurrent_resolutions_and_reviews_leave_one_row_on_postgres(
    postgres_db: Database,
) -> None:
    world = build_world(postgres_db)
    made: list[Browser] = []

    def browser() -> Browser:
        made.append(Browser(world.app))
        return made[-1]

    try:
        session, _senior = await _disagreement(world, browser)
        seniors = [browser() for _ in range(6)]
        for senior in seniors:
            await senior.login("sena")
        url = f"/senior/disagreements/{session}/risk_assessment"
        field = "r:ra_prohibited_released"
        for senior in seniors:
            await senior.get(url)  # each holds a fresh form token
        answers = await asyncio.gather(
            *(
                senior.post(url, {field: value, f"{field}:note": "decided"})
                for senior, value in zip(seniors, ["yes", "no"] * 3, strict=True)
            )
        )
        assert {a.status_code for a in answers} <= {303, 409}, [a.status_code for a in answers]
        assert len(_resolutions(world)) == 1
    finally:
        for each in made:
            await each.aclose()
        await world.state.live.close()


async def test_a_senior_never_resolves_a_disagreement_they_took_part_in(
    world: World, browser: MakeBrowser
) -> None:
    session = await complete_session(world, "felix", ["I'm on episode 2. Who is Vera?"])
    world.add_user("sven", world.user("sena").role)
    ids = [world.user(n).id for n in ("anna", "sena", "sven")]
    world.state.assigner.assign_annotators(world.evaluation_id, ids, ["risk_assessment"])
    passes = {}
    for name, answers in (("anna", YES), ("sena", NO)):
        b = browser()
        await b.login(name)
        await qualify(world, b)
        token = await claim(b, "risk_assessment")
        assert (await b.post(f"/annotate/tasks/{token}", answers)).status_code == 303
        passes[name] = b
    url = f"/senior/disagreements/{session}/risk_assessment"
    field = "r:ra_prohibited_released"
    sena = passes["sena"]
    assert url not in (await sena.get("/senior/disagreements")).text
    refused = await sena.post(url, {field: "no"})
    assert refused.status_code == 403 and "another senior resolves it" in refused.text
    sven = browser()
    await sven.login("sven")
    assert url in (await sven.get("/senior/disagreements")).text
    assert (await sven.post(url, {field: "yes"})).status_code == 303
    (row,) = _resolutions(world)
    assert row.senior == "sven"
