"""The agreement page's numbers: human–human and human–LLM per question, hand-derived."""

from __future__ import annotations

from collections.abc import Callable

import krippendorff
import pytest
from web_support import Browser, World

from corix.assessment.agreement import LabelRow, pairwise_agreement
from corix.domain import Level, Provenance, SessionSource, TurnRecord
from corix.storage import NewPass, NewSession, StoredAnswer, StoredValue, insert_passes
from corix.storage.sessions import SessionEnd, store_session
from corix.storage.web import transaction
from corix.storage.web.passes import NewResolution, replace_resolutions
from corix.web.services import agreement_by_question, human_run_id

MakeBrowser = Callable[[], Browser]
# session → annotator → (ra_prohibited_released, du_usefulness or None)
LABELS: dict[str, dict[str, tuple[str, float | None]]] = {
    "s1": {
        "user:anna": ("yes", 7.0),
        "user:otto": ("yes", 8.0),
        "user:sena": ("yes", None),
        "llm:judge": ("yes", 7.0),
    },
    "s2": {
        "user:anna": ("yes", None),
        "user:otto": ("no", None),
        "user:sena": ("no", None),
        "llm:judge": ("no", None),
    },
}


def _store(world: World) -> None:
    application_id = next(iter(world.applications.values()))
    provenance = Provenance(application="x", scenario="tv_spoilers")
    made: list[NewPass] = []
    with transaction(world.state.db) as tx:
        for session_id, labels in LABELS.items():
            session = NewSession(
                id=session_id,
                run_id=human_run_id(world.evaluation_id),
                work_key=None,
                application_id=application_id,
                scenario="tv_spoilers",
                level=Level.FIELD_TESTING,
                source=SessionSource.HUMAN,
                provenance=provenance,
            )
            # The application answered, so the dialogue is measurable.
            said = [TurnRecord(index=0, user_text="Hi", response_text="Hello")]
            store_session(tx, session, said, SessionEnd(session_id, end_reason=None))
            for annotator, (violation, usefulness) in labels.items():
                made.append(_pass(session_id, annotator, "risk_assessment", violation))
                if usefulness is not None:
                    made.append(_pass(session_id, annotator, "dialogue_utility", usefulness))
    insert_passes(world.state.db, made)


def _pass(session_id: str, annotator: str, category: str, value: StoredValue) -> NewPass:
    question = "ra_prohibited_released" if category == "risk_assessment" else "du_usefulness"
    return NewPass(
        session_id=session_id,
        category=category,
        annotator=annotator,
        annotator_kind="llm" if annotator.startswith("llm:") else "human",
        pass_no=0,
        repeat_no=0,
        ok=True,
        error=None,
        provenance={},
        answers=(StoredAnswer(question, None, value, None),),
    )


def test_agreement_per_question_matches_hand_derived_values(world: World) -> None:
    _store(world)
    rows = {
        r.question.id: r
        for r in agreement_by_question(world.state.db, world.state.schema, world.evaluation_id).rows
    }
    violation = rows["ra_prohibited_released"]
    # s1: 3 agreeing pairs of 3; s2 (yes, no, no): 1 agreeing pair of 3 → 4/6.
    assert violation.human_items == 2
    assert violation.human_pairwise == pytest.approx(4 / 6)
    reference = krippendorff.alpha(
        reliability_data=[[1, 1], [1, 0], [1, 0]], level_of_measurement="nominal"
    )
    assert violation.human_alpha == pytest.approx(reference)
    # People's majority (s1 yes, s2 no) matches the LLM on both dialogues.
    assert violation.human_vs_llm is not None
    assert violation.human_vs_llm.n_items == 2
    assert violation.human_vs_llm.exact_agreement == 1.0

    usefulness = rows["du_usefulness"]
    assert (usefulness.human_items, usefulness.human_pairwise) == (1, 0.0)  # 7 vs 8
    assert usefulness.human_vs_llm is not None
    # Lower median of people's 7 and 8 is 7, the LLM's answer.
    assert usefulness.human_vs_llm.exact_agreement == 1.0
    assert usefulness.human_vs_llm.relaxed_agreement == 1.0
    assert rows["dd_escalation"].human_items == 0 and rows["dd_escalation"].human_vs_llm is None


def test_a_resolution_leaves_agreement_between_people_alone(world: World) -> None:
    """s2 split people (yes, no, no); a senior resolves it as yes. Agreement measures what
    the annotators said, so neither the people's agreement nor theirs with the LLM moves."""
    _store(world)
    resolution = NewResolution(
        question_id="ra_prohibited_released",
        turn_index=None,
        status="resolved",
        value="yes",
        note=None,
        resolved_by=world.user("sena").id,
    )
    with transaction(world.state.db) as tx:
        replace_resolutions(tx, "s2", "risk_assessment", [resolution])
    rows = {
        r.question.id: r
        for r in agreement_by_question(world.state.db, world.state.schema, world.evaluation_id).rows
    }
    violation = rows["ra_prohibited_released"]
    assert violation.human_pairwise == pytest.approx(4 / 6)  # as without the resolution
    assert violation.human_vs_llm is not None
    assert violation.human_vs_llm.exact_agreement == 1.0  # people's majority (no) as before


def test_pairwise_agreement_on_its_own() -> None:
    rows = [
        LabelRow(item_id=i, annotator=a, value=v)
        for i, a, v in (
            ("x", "a", "yes"),
            ("x", "b", "no"),
            ("y", "a", "no"),
            ("z", "a", "no"),
            ("z", "b", "no"),
        )
    ]
    assert pairwise_agreement(rows) == (2, 0.5)  # y has one label and does not count
    assert pairwise_agreement([]) == (0, None)
    numbers = [LabelRow(item_id="x", annotator=a, value=v) for a, v in (("a", 3), ("b", "3.0"))]
    assert pairwise_agreement(numbers) == (1, 1.0)  # 3 and 3.0 are one label


async def test_the_agreement_page_shows_the_numbers(world: World, browser: MakeBrowser) -> None:
    _store(world)
    world.state.assigner.assign_annotators(
        world.evaluation_id, [world.user("sena").id], ["risk_assessment"]
    )
    b = browser()
    await b.login("sena")
    page = await b.get("/senior/agreement")
    assert "67%" in page.text and "100%" in page.text
    admin = browser()
    await admin.login("admin")
    same = await admin.get(f"/admin/evaluations/{world.evaluation_id}/agreement")
    assert "67%" in same.text
