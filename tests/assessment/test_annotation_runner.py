"""Annotating stored runs: gating, skipping what is stored, repeats, consensus, failures."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import Callable

import pytest
from annotator_support import CLEAN, CONFABULATION, SPOILER, WITHHELD, Dialogue, store_run

from corix.assessment.annotation_run import (
    AnnotateOptions,
    AnnotationSummary,
    annotate_run,
    annotate_run_async,
)
from corix.errors import CorixError, UnknownNameError
from corix.llm import ChatRequest, EndpointConfig, LLMClient, MockModel, ScriptedTransport
from corix.storage import Database
from corix.storage.annotations import delete_consensus, load_consensus, load_passes

MOCK = EndpointConfig(name="test", transport="mock", model="corix-mock")


def fresh(dialogue: Dialogue) -> Dialogue:
    return dataclasses.replace(dialogue, id=uuid.uuid4().hex)


def _severity_reply(value: object) -> str:
    return json.dumps({"reasoning": f"judged {value}", "severity": value})


async def _annotate_scripted(
    db: Database,
    run_id: str,
    script: list[str] | Callable[[ChatRequest], str],
    options: AnnotateOptions,
    annotator: str = "llm-harms",
) -> AnnotationSummary:
    transport = ScriptedTransport(MockModel(script))
    async with LLMClient(MOCK, transport=transport) as client:
        return await annotate_run_async(db, run_id, annotator, options=options, client=client)


def test_reference_run_gates_categories_and_skips_what_is_stored(sqlite_db: Database) -> None:
    dialogues = [fresh(d) for d in (SPOILER, CLEAN, WITHHELD, CONFABULATION)]
    run_id = store_run(sqlite_db, dialogues)
    summary = annotate_run(sqlite_db, run_id)
    counts = summary.by_target
    assert summary.sessions == 4 and summary.stored_as == "reference"
    assert counts["risk_assessment"].stored == 4
    assert counts["dialogue_utility"].stored == 4
    for gated in ("content_characterization", "dialogue_dynamics", "interaction_style"):
        # Three dialogues violate the guardrail; the clean one is not asked.
        assert (counts[gated].stored, counts[gated].gated_out) == (3, 1)
    passes = load_passes(sqlite_db, run_id=run_id)
    assert len(passes) == 4 + 4 + 3 * 3
    clean = dialogues[1].id
    assert {p.category for p in passes if p.session_id == clean} == {
        "risk_assessment",
        "dialogue_utility",
    }
    assert all(p.ok and p.annotator_kind == "reference" for p in passes)
    assert passes[0].provenance["guideline_version"] == "aria-reference-rules-1.0/aria-1.0"

    again = annotate_run(sqlite_db, run_id)
    assert (again.passes_stored, again.passes_already_stored) == (0, 17)
    assert len(load_passes(sqlite_db, run_id=run_id)) == 17


async def test_every_repeat_is_stored_with_its_seed_and_the_consensus_kept(
    any_db: Database,
) -> None:
    run_id = store_run(any_db, [fresh(CLEAN)])
    options = AnnotateOptions(repeats=3, harms=("groundedness",))
    await _annotate_scripted(any_db, run_id, [_severity_reply(v) for v in (2, 4, 2)], options)
    passes = load_passes(any_db, run_id=run_id)
    assert [p.repeat_no for p in passes] == [0, 1, 2]
    assert [p.answers[0].value for p in passes] == [2.0, 4.0, 2.0]
    assert [p.answers[0].reasoning for p in passes] == ["judged 2", "judged 4", "judged 2"]
    assert len({p.provenance["seed"] for p in passes}) == 3  # distinct seeds per repeat
    (row,) = load_consensus(any_db, run_id=run_id)
    # Runs 2, 4, 2: the median is 2; one run of three disagrees.
    assert (row.question_id, row.value, row.method, row.n_runs) == (
        "severity",
        2.0,
        "conservative",
        3,
    )
    assert row.flip_rate == pytest.approx(1 / 3)

    # One more repeat later: only the new run is asked, and the consensus is replaced.
    more = AnnotateOptions(repeats=4, harms=("groundedness",))
    await _annotate_scripted(any_db, run_id, [_severity_reply(4)], more)
    (row,) = load_consensus(any_db, run_id=run_id)
    # Runs 2, 4, 2, 4: middle values 2 and 4 tie; a low groundedness score is the defect,
    # so the tie goes to 2, and is reported.
    assert (row.value, row.method, row.n_runs, row.flip_rate) == (2.0, "conservative_tie", 4, 0.5)
    assert len(load_passes(any_db, run_id=run_id)) == 4


@pytest.mark.parametrize("lost", ["all", "some"])
async def test_a_rerun_repairs_consensus_lost_in_a_crash(any_db: Database, lost: str) -> None:
    dialogues = [fresh(CLEAN), fresh(SPOILER)]
    run_id = store_run(any_db, dialogues)
    options = AnnotateOptions(repeats=3, harms=("groundedness",))
    replies = [_severity_reply(v) for v in (2, 4, 2, 5, 5, 1)]
    await _annotate_scripted(any_db, run_id, replies, options)
    before = sorted(load_consensus(any_db, run_id=run_id), key=lambda r: r.session_id)
    assert {r.annotator for r in before} == {"llm:corix-mock"} and len(before) == 2
    # A kill -9 after the repeats were committed and before (all of) their consensus was.
    victims = [dialogues[0].id] if lost == "some" else [d.id for d in dialogues]
    delete_consensus(
        any_db, [(session_id, "harm:groundedness", "llm:corix-mock") for session_id in victims]
    )
    # The rerun asks the model nothing (its script is empty) and derives what is missing.
    summary = await _annotate_scripted(any_db, run_id, [], options)
    assert summary.passes_stored == 0
    after = sorted(load_consensus(any_db, run_id=run_id), key=lambda r: r.session_id)
    assert [(r.session_id, r.value, r.n_runs) for r in after] == [
        (r.session_id, r.value, r.n_runs) for r in before
    ]


async def test_nominal_answers_take_the_majority(sqlite_db: Database) -> None:
    run_id = store_run(sqlite_db, [fresh(CLEAN)])
    replies = [
        json.dumps(
            {
                "du_usefulness": {"reasoning": "r", "value": usefulness},
                "du_added_work": {"reasoning": "r", "value": work},
            }
        )
        for usefulness, work in ((8, "no"), (3, "yes"), (9, "no"))
    ]
    options = AnnotateOptions(repeats=3, categories=("dialogue_utility",))
    await _annotate_scripted(sqlite_db, run_id, replies, options, annotator="llm")
    rows = {row.question_id: row for row in load_consensus(sqlite_db, run_id=run_id)}
    assert (rows["du_added_work"].value, rows["du_added_work"].method) == ("no", "conservative")
    assert rows["du_added_work"].flip_rate == pytest.approx(1 / 3)
    assert (rows["du_usefulness"].value, rows["du_usefulness"].method) == (8.0, "conservative")


async def test_adaptive_repeats_stop_once_the_answer_is_settled(sqlite_db: Database) -> None:
    # On groundedness' 1-5 scale two agreeing runs leave a 7.2% chance (judge noise 0.4)
    # that five would settle otherwise, above the 7% bound; three make the median certain.
    run_id = store_run(sqlite_db, [fresh(CLEAN)])
    options = AnnotateOptions(repeats=5, adaptive=True, min_repeats=2, harms=("groundedness",))
    summary = await _annotate_scripted(
        sqlite_db, run_id, lambda _request: _severity_reply(5), options
    )
    assert summary.by_target["harm:groundedness"].repeats_saved == 2
    assert len(load_passes(sqlite_db, run_id=run_id)) == 3
    (row,) = load_consensus(sqlite_db, run_id=run_id)
    assert (row.value, row.n_runs, row.flip_rate) == (5.0, 3, 0.0)


@pytest.mark.parametrize(("max_flip_rate", "runs"), [(0.0, 4), (0.3, 4), (0.34, 3)])
async def test_adaptive_repeats_stop_once_the_flip_rate_is_under_the_threshold(
    sqlite_db: Database, max_flip_rate: float, runs: int
) -> None:
    # Severities 5, 2, 5, 5, 2: after three runs (flip rate 1/3) two more lows could still
    # pull the lower median of five down to 2 (a 20% chance at judge noise 0.4); after four
    # (flip rate 1/4) nothing can. So only a threshold of at least 1/3 stops at three runs.
    run_id = store_run(sqlite_db, [fresh(CLEAN)])
    options = AnnotateOptions(
        repeats=5,
        adaptive=True,
        min_repeats=2,
        max_flip_rate=max_flip_rate,
        harms=("groundedness",),
    )
    replies = [_severity_reply(v) for v in (5, 2, 5, 5, 2)]
    await _annotate_scripted(sqlite_db, run_id, replies, options)
    (row,) = load_consensus(sqlite_db, run_id=run_id)
    assert (row.value, row.n_runs) == (5.0, runs)


async def test_failed_passes_are_stored_and_can_be_asked_again(any_db: Database) -> None:
    run_id = store_run(any_db, [fresh(CLEAN)])
    options = AnnotateOptions(harms=("groundedness",), max_reasks=1)
    summary = await _annotate_scripted(any_db, run_id, ["nonsense", "more nonsense"], options)
    assert summary.passes_failed == 1
    (failed,) = load_passes(any_db, run_id=run_id)
    assert (failed.status, failed.answers) == ("failed", ())
    assert failed.error is not None and failed.error.startswith("no valid answer after 2")

    # A failed pass counts as stored; --retry-failed deletes it and asks again.
    retry = AnnotateOptions(harms=("groundedness",), retry_failed=True)
    await _annotate_scripted(any_db, run_id, [_severity_reply(4)], retry)
    (redone,) = load_passes(any_db, run_id=run_id)
    assert redone.ok and redone.answers[0].value == 4.0


async def test_retry_failed_redoes_only_what_the_annotator_being_run_asks(
    sqlite_db: Database,
) -> None:
    # ``llm`` and ``llm-harms`` both store as llm:<model>: retrying one must not delete
    # the other's failed passes (which it would never redo).
    run_id = store_run(sqlite_db, [fresh(CLEAN)])
    harms = AnnotateOptions(harms=("groundedness",), max_reasks=0)
    await _annotate_scripted(sqlite_db, run_id, ["nonsense"], harms)
    aria = AnnotateOptions(categories=("risk_assessment",), max_reasks=0, retry_failed=True)
    await _annotate_scripted(sqlite_db, run_id, ["nonsense"], aria, annotator="llm")
    statuses = {p.category: p.status for p in load_passes(sqlite_db, run_id=run_id)}
    assert statuses == {"harm:groundedness": "failed", "risk_assessment": "failed"}

    retry_harms = AnnotateOptions(harms=("groundedness",), retry_failed=True)
    await _annotate_scripted(sqlite_db, run_id, [_severity_reply(3)], retry_harms)
    statuses = {p.category: p.status for p in load_passes(sqlite_db, run_id=run_id)}
    assert statuses == {"harm:groundedness": "ok", "risk_assessment": "failed"}


def test_a_harm_that_does_not_apply_stores_nothing(sqlite_db: Database) -> None:
    with_prompt = fresh(dataclasses.replace(CLEAN, system_prompt="You are a spoiler-free guide."))
    run_id = store_run(sqlite_db, [fresh(CLEAN), with_prompt])
    summary = annotate_run(sqlite_db, run_id, "reference-harms")
    jailbreak = summary.by_target["harm:jailbreak"]
    assert (jailbreak.stored, jailbreak.not_applicable) == (1, 1)
    judged = [
        p.session_id
        for p in load_passes(sqlite_db, run_id=run_id)
        if p.category == "harm:jailbreak"
    ]
    assert judged == [with_prompt.id]


def test_gated_categories_read_the_stored_risk_assessment(sqlite_db: Database) -> None:
    run_id = store_run(sqlite_db, [fresh(CLEAN), fresh(SPOILER)])
    annotate_run(sqlite_db, run_id, options=AnnotateOptions(categories=("risk_assessment",)))
    later = annotate_run(
        sqlite_db, run_id, options=AnnotateOptions(categories=("content_characterization",))
    )
    counts = later.by_target["content_characterization"]
    assert (counts.stored, counts.gated_out) == (1, 1)


def test_options_are_checked_before_anything_is_asked(sqlite_db: Database) -> None:
    run_id = store_run(sqlite_db, [fresh(CLEAN)])
    with pytest.raises(CorixError, match="deterministic"):
        annotate_run(sqlite_db, run_id, options=AnnotateOptions(repeats=3))
    with pytest.raises(UnknownNameError, match="Did you mean 'risk_assessment'"):
        annotate_run(sqlite_db, run_id, options=AnnotateOptions(categories=("risk_asessment",)))
    with pytest.raises(CorixError, match="does not handle harm pack 'harmful_content'"):
        annotate_run(
            sqlite_db,
            run_id,
            "reference-harms",
            options=AnnotateOptions(harms=("harmful_content",)),
        )
    with pytest.raises(CorixError, match="needs a model endpoint"):
        annotate_run(sqlite_db, run_id, "llm")
    assert load_passes(sqlite_db, run_id=run_id) == []


def test_annotation_round_trips_on_both_backends(any_db: Database) -> None:
    dialogues = [fresh(SPOILER), fresh(CLEAN)]
    run_id = store_run(any_db, dialogues)
    annotate_run(any_db, run_id)
    annotate_run(
        any_db,
        run_id,
        "llm",
        endpoint=MOCK,
        options=AnnotateOptions(repeats=2, categories=("dialogue_utility",)),
    )
    passes = load_passes(any_db, session_ids=[dialogues[0].id], annotator="reference")
    values = {a.question_id: a.value for p in passes for a in p.answers if a.turn_index is None}
    assert values["ra_prohibited_released"] == "yes"
    assert values["du_usefulness"] == 1.0  # sliders come back as numbers
    consensus = load_consensus(any_db, run_id=run_id)
    assert {(row.session_id, row.question_id) for row in consensus} == {
        (d.id, q) for d in dialogues for q in ("du_usefulness", "du_added_work")
    }
    assert all(row.n_runs == 2 for row in consensus)


async def test_a_second_annotation_of_one_run_at_once_stops_with_a_message(
    any_db: Database,
) -> None:
    dialogues = [fresh(d) for d in (SPOILER, CLEAN, WITHHELD, CONFABULATION)]
    run_id = store_run(any_db, dialogues)
    first, second = await asyncio.gather(
        annotate_run_async(any_db, run_id),
        annotate_run_async(any_db, run_id),
        return_exceptions=True,
    )
    assert isinstance(first, AnnotationSummary) and first.sessions == 4
    assert isinstance(second, CorixError)
    assert f"run '{run_id}' is held by corix annotate" in str(second)
    passes = load_passes(any_db, run_id=run_id)
    keys = [(p.session_id, p.category, p.annotator, p.pass_no, p.repeat_no) for p in passes]
    assert len(keys) == len(set(keys)) == 17
    again = await annotate_run_async(any_db, run_id)  # the lock went with the first
    assert again.sessions == 4 and again.passes_stored == 0
