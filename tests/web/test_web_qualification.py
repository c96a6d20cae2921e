"""The qualification test screens: random draws, feedback without answers, limits, cool-down."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlalchemy import select
from web_support import Browser, World, end_cooldown, form_fields, gold_form

from corix.assessment import Answer
from corix.storage.orm_web import QualificationAttemptRow, QualificationDrawRow
from corix.web.services.qualification import score_answers

MakeBrowser = Callable[[], Browser]
WRONG = {
    "ra_prohibited_released": "yes",
    "ra_permitted_withheld": "yes",
    "ra_user_induced": "no",
    "ra_risk_type": "environmental",
    "ra_outcome": "neither",
}


def _drawn(html: str) -> list[str]:
    """The gold dialogue ids a test page asks about, in order."""
    return list(dict.fromkeys(name.split(":")[1] for name in form_fields(html, "g:")))


def _wrong_answers(html: str) -> dict[str, str]:
    return {name: WRONG[name.rsplit(":", 1)[1]] for name in form_fields(html, "g:")}


async def _annotator(browser: MakeBrowser) -> Browser:
    b = browser()
    await b.login("anna")
    return b


async def test_a_failed_attempt_explains_by_question_and_the_retake_draws_new_dialogues(
    world: World, browser: MakeBrowser
) -> None:
    rules = world.state.qualification.rules
    b = await _annotator(browser)
    page = await b.get("/annotate/qualification")
    first = _drawn(page.text)
    assert len(first) == rules.draw_size
    assert _drawn((await b.get("/annotate/qualification")).text) == first  # reload: same draw

    failed = await b.post("/annotate/qualification", _wrong_answers(page.text))
    assert failed.status_code == 200 and "Not passed" in failed.text
    # Feedback counts matches per question; it never names the expected answers.
    feedback = re.search(r'<table id="qualification-feedback">(.*?)</table>', failed.text, re.S)
    assert feedback is not None
    assert "did the application give out something" in feedback.group(1)
    assert re.search(r"<td>\d of \d</td>", feedback.group(1))
    for dialogue in world.state.qualification.gold.dialogues:
        assert dialogue.explanation[:40] not in failed.text
    assert "Expected" not in failed.text
    assert "retake" not in failed.text  # the cool-down has not ended

    waiting = await b.get("/annotate/qualification")
    assert 'id="qualification-cooldown"' in waiting.text and "g:" not in waiting.text
    refused = await b.post("/annotate/qualification", gold_form(world))
    assert refused.status_code == 403 and "next attempt opens at" in refused.text

    end_cooldown(world)
    second = _drawn((await b.get("/annotate/qualification")).text)
    assert len(second) == rules.draw_size and not set(second) & set(first)
    passed = await b.post("/annotate/qualification", gold_form(world))
    assert "Passed — 100%" in passed.text

    with world.state.db.session() as s:
        attempts = s.scalars(select(QualificationAttemptRow).order_by("id")).all()
        draws = s.scalars(select(QualificationDrawRow).order_by("id")).all()
    assert [a.passed for a in attempts] == [False, True]
    assert [sorted(a.answers) for a in attempts] == [sorted(first), sorted(second)]
    assert [d.attempt_id for d in draws] == [a.id for a in attempts]


async def test_the_attempt_limit_locks_the_test(world: World, browser: MakeBrowser) -> None:
    b = await _annotator(browser)
    for _ in range(world.state.qualification.rules.max_attempts):
        end_cooldown(world)
        page = await b.get("/annotate/qualification")
        assert (
            "Not passed"
            in (await b.post("/annotate/qualification", _wrong_answers(page.text))).text
        )
    end_cooldown(world)
    locked = await b.get("/annotate/qualification")
    assert 'id="qualification-locked"' in locked.text and "g:" not in locked.text
    refused = await b.post("/annotate/qualification", gold_form(world))
    assert refused.status_code == 403 and "every attempt" in refused.text


async def test_a_draw_counts_once_and_only_its_dialogues_are_scored(
    world: World, browser: MakeBrowser
) -> None:
    b = await _annotator(browser)
    page = await b.get("/annotate/qualification")
    drawn = set(_drawn(page.text))
    # Right answers for the dialogues not drawn and wrong ones for the drawn: a fail.
    form = {
        name: value for name, value in gold_form(world).items() if name.split(":")[1] not in drawn
    } | _wrong_answers(page.text)
    result = await b.post("/annotate/qualification", form)
    assert "Not passed" in result.text
    again = await b.post("/annotate/qualification", form)  # the same form once more
    assert again.status_code == 403
    with world.state.db.session() as s:
        assert len(s.scalars(select(QualificationAttemptRow)).all()) == 1


def test_scoring_counts_matches_per_question(world: World) -> None:
    qualification = world.state.qualification
    schema = world.state.schema
    spoiler = next(d for d in qualification.gold.dialogues if d.id == "spoiler_released")
    recap = next(d for d in qualification.gold.dialogues if d.id == "safe_recap")
    given = {
        # 4 of spoiler's 5 scored answers match (the risk type does not) ...
        spoiler.id: [
            Answer(question_id="ra_prohibited_released", value="yes"),
            Answer(question_id="ra_permitted_withheld", value="no"),
            Answer(question_id="ra_user_induced", value="yes"),
            Answer(question_id="ra_risk_type", value="confabulation"),
            Answer(question_id="ra_outcome", value="negative"),
        ],
        # ... and 1 of recap's 2.
        recap.id: [
            Answer(question_id="ra_prohibited_released", value="yes"),
            Answer(question_id="ra_permitted_withheld", value="no"),
        ],
    }
    result = score_answers(schema, [spoiler, recap], given, pass_mark=0.8)
    assert result.score == 5 / 7 and not result.passed
    tallies = {item.question: (item.matched, item.scored) for item in result.feedback}
    question = schema.screening_category.question
    assert tallies[question("ra_prohibited_released").text] == (1, 2)
    assert tallies[question("ra_permitted_withheld").text] == (2, 2)
    assert tallies[question("ra_risk_type").text] == (0, 1)
