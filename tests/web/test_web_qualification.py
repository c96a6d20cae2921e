"""The qualification test screens: random draws, feedback without answers, limits, cool-down."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from html import unescape

from web_support import (
    Browser,
    World,
    answer_key,
    build_world,
    end_cooldown,
    form_fields,
    gold_form,
)

from corix.assessment.answers import Answer
from corix.storage import Database
from corix.storage.web import qualification, transaction
from corix.storage.web.qualification import AttemptRecord, DrawRecord
from corix.web import Role
from corix.web.services.qualification import Qualification, QualificationRules, score_answers
from corix.web.services.training import GoldSet

MakeBrowser = Callable[[], Browser]
WRONG = {
    "ra_prohibited_released": "yes",
    "ra_permitted_withheld": "yes",
    "ra_user_induced": "no",
    "ra_risk_type": "environmental",
    "ra_outcome": "neither",
}


def _drawn(world: World, username: str = "anna") -> list[list[str]]:
    """Every draw of ``username`` so far, as gold dialogue ids in the order shown."""
    return [draw.dialogue_ids for draw in _draws(world, username)]


def _draws(world: World, username: str = "anna") -> list[DrawRecord]:
    with transaction(world.state.db) as tx:
        return qualification.draws(tx, world.user(username).id)


def _attempts(world: World, username: str = "anna") -> list[AttemptRecord]:
    with transaction(world.state.db) as tx:
        return qualification.attempts(tx, world.user(username).id)


def _shown(world: World, html: str) -> list[str]:
    """The gold dialogues a test page shows, recognized by their first user message."""
    gold = world.state.qualification.gold.dialogues
    text = unescape(html)
    found = {d.id: text.find(d.turns[0].user) for d in gold}
    return sorted((d for d, at in found.items() if at >= 0), key=found.__getitem__)


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
    (first,) = _drawn(world)
    assert len(first) == rules.draw_size and _shown(world, page.text) == first
    # The form names dialogues by their place in the draw, never by their telling ids.
    assert {name.split(":")[1] for name in form_fields(page.text, "g:")} == {"1", "2", "3", "4"}
    for dialogue in world.state.qualification.gold.dialogues:
        assert dialogue.id not in page.text
    reloaded = await b.get("/annotate/qualification")  # a reload shows the same draw
    assert _shown(world, reloaded.text) == first and _drawn(world) == [first]

    failed = await b.post("/annotate/qualification", _wrong_answers(page.text))
    assert failed.status_code == 200 and "Not passed" in failed.text
    # Feedback counts matches per question; it never names the expected answers.
    feedback = re.search(r'<table id="qualification-feedback">(.*?)</table>', failed.text, re.S)
    assert feedback is not None
    assert "did the application give out something" in feedback.group(1)
    assert re.search(r"<td>\d of \d</td>", feedback.group(1))
    for dialogue in world.state.qualification.gold.dialogues:
        assert dialogue.explanation[:40] not in failed.text
        assert dialogue.id not in failed.text
    assert "Expected" not in failed.text
    assert "retake" not in failed.text  # the cool-down has not ended

    waiting = await b.get("/annotate/qualification")
    assert 'id="qualification-cooldown"' in waiting.text and "g:" not in waiting.text
    refused = await b.post("/annotate/qualification", gold_form(world, "anna"))
    assert refused.status_code == 403 and "next attempt opens at" in refused.text

    end_cooldown(world)
    retake = await b.get("/annotate/qualification")
    second = _drawn(world)[1]
    assert len(second) == rules.draw_size and not set(second) & set(first)
    assert _shown(world, retake.text) == second
    passed = await b.post("/annotate/qualification", gold_form(world, "anna"))
    assert "Passed — 100%" in passed.text

    attempts, draws = _attempts(world), _draws(world)
    assert [a.passed for a in attempts] == [False, True]
    assert [sorted(a.answers) for a in attempts] == [sorted(first), sorted(second)]
    assert [d.attempt_id for d in draws] == [a.id for a in attempts]


async def test_copying_the_failed_attempts_answer_key_does_not_pass_the_retake(
    sqlite_db: Database,
) -> None:
    """Even the full answer key of a failed attempt is worth nothing at the retake.

    A copied key passes a retake only by chance, as a guess from the answers' base rates
    might (see the next test); seed 1 draws a retake where it does not.
    """
    world = build_world(sqlite_db, seed=1)
    b = Browser(world.app)
    await b.login("anna")
    page = await b.get("/annotate/qualification")
    key = gold_form(world, "anna")  # the first draw's answer key, however it was learned
    await b.post("/annotate/qualification", _wrong_answers(page.text))
    end_cooldown(world)
    await b.get("/annotate/qualification")
    copied = await b.post("/annotate/qualification", key)
    assert copied.status_code == 200 and "Not passed" in copied.text
    assert [a.passed for a in _attempts(world)] == [False, False]
    await b.aclose()


def test_a_copied_answer_key_passes_no_more_often_than_a_guess(world: World) -> None:
    """Forty annotators each fail, then hand in their first draw's full answer key."""
    qualification = world.state.qualification
    copied_keys = {}
    for index in range(40):
        user = world.add_user(f"copier{index}", Role.ANNOTATOR)
        first = qualification.draw(user)
        copied_keys[user.id] = answer_key(first)
        assert not qualification.submit(user, _wrong_form(len(first))).passed
    end_cooldown(world)
    passed = 0
    for index in range(40):
        user = world.user(f"copier{index}")
        qualification.draw(user)
        passed += qualification.submit(user, copied_keys[user.id]).passed
    # Before, every copy passed (the same dialogues came back); now only by chance
    # (five of forty with this seed; about one in twenty in the long run).
    assert passed <= 6


async def test_three_attempts_never_repeat_a_dialogue(world: World, browser: MakeBrowser) -> None:
    rules = world.state.qualification.rules
    assert len(world.state.qualification.gold.dialogues) >= rules.max_attempts * rules.draw_size
    b = await _annotator(browser)
    for _ in range(rules.max_attempts):
        end_cooldown(world)
        page = await b.get("/annotate/qualification")
        await b.post("/annotate/qualification", _wrong_answers(page.text))
    drawn = [dialogue for draw in _drawn(world) for dialogue in draw]
    assert len(drawn) == len(set(drawn)) == rules.max_attempts * rules.draw_size


def test_draws_prefer_the_least_seen_dialogues_once_the_pool_runs_out(world: World) -> None:
    """A pool of six, draws of four: the third draw takes the two unseen dialogues first."""
    state = world.state
    gold = GoldSet(version="t", dialogues=state.qualification.gold.dialogues[:6])
    rules = QualificationRules(draw_size=4, max_attempts=5, cooldown=timedelta(0))
    qualification = Qualification(state.db, state.schema, gold, rules, rng=random.Random(1))
    anna = world.user("anna")
    draws = []
    for _ in range(3):
        drawn = qualification.draw(anna)
        draws.append([d.id for d in drawn])
        assert not qualification.submit(anna, _wrong_form(len(drawn))).passed
    first, second, third = draws
    assert len(set(first) | set(second)) == 6  # the second draw took the two unseen first
    counts = Counter(first + second)
    assert all(counts[d] == 1 for d in third if d not in set(first) & set(second))
    assert not set(third) & (set(first) & set(second))  # twice-seen ones wait


def _wrong_form(size: int) -> dict[str, str]:
    return {f"g:{place}:{q}": value for place in range(1, size + 1) for q, value in WRONG.items()}


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
    refused = await b.post("/annotate/qualification", gold_form(world, "anna"))
    assert refused.status_code == 403 and "every attempt" in refused.text


async def test_a_draw_counts_once_and_only_its_dialogues_are_scored(
    world: World, browser: MakeBrowser
) -> None:
    b = await _annotator(browser)
    page = await b.get("/annotate/qualification")
    # Wrong answers for the drawn dialogues, and right ones for dialogues not drawn
    # (named by id, as an old form did): a fail, and the extra fields count for nothing.
    (drawn,) = _drawn(world)
    form = _wrong_answers(page.text) | {
        f"g:{dialogue.id}:{question}": value
        for dialogue in world.state.qualification.gold.dialogues
        if dialogue.id not in drawn
        for question, value in dialogue.answers.items()
    }
    result = await b.post("/annotate/qualification", form)
    assert "Not passed" in result.text
    again = await b.post("/annotate/qualification", form)  # the same form once more
    assert again.status_code == 403
    assert len(_attempts(world)) == 1


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
