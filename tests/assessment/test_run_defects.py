"""Defect rates and agreement on a tiny stored run, checked by hand."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from annotator_support import CLEAN, SPOILER, WITHHELD, Dialogue, store_run
from typer.testing import CliRunner

from corix.assessment.annotation_run import AnnotateOptions, annotate_run, annotate_run_async
from corix.assessment.importing import import_labels
from corix.cli.main import app
from corix.demo import demo_plan
from corix.execution import execute_plan
from corix.llm import EndpointConfig, LLMClient, MockModel, ScriptedTransport
from corix.measurement.core import measure
from corix.measurement.defect_rates import WILSON, DefectRate
from corix.measurement.labels.settle import GUARDRAIL_VIOLATION
from corix.measurement.spec import AnnotatorSelector, MeasurementSpec
from corix.report import ReportSettings, build_report, render_html, report_document
from corix.report.markdown import render_markdown
from corix.storage import Database


def compute_defect_rates(
    db: Database,
    run_id: str,
    *,
    by: tuple[str, ...] = ("harm", "application", "scenario", "level"),
    annotator: str | None = None,
) -> list[DefectRate]:
    """Rates per annotator (not per source), as these tests compare annotators."""
    selectors = (AnnotatorSelector(name=annotator),) if annotator else ()
    spec = MeasurementSpec(group_annotators_by="annotator", annotators=selectors)
    return measure(db, [run_id], spec).rates(by=by)


def _copy(dialogue: Dialogue, application: str, session_id: str) -> Dialogue:
    return dataclasses.replace(dialogue, id=session_id, application=application)


@pytest.fixture
def tiny_run(sqlite_db: Database) -> tuple[str, list[Dialogue]]:
    """Guarded: clean, clean, withheld (1 of 3 violates). Unguarded: spoiler, spoiler, clean."""
    dialogues = [
        _copy(CLEAN, "guarded", "s1"),
        _copy(CLEAN, "guarded", "s2"),
        _copy(WITHHELD, "guarded", "s3"),
        _copy(SPOILER, "unguarded", "s4"),
        _copy(SPOILER, "unguarded", "s5"),
        _copy(CLEAN, "unguarded", "s6"),
    ]
    return store_run(sqlite_db, dialogues), dialogues


def test_guardrail_violation_rates_per_application(
    sqlite_db: Database, tiny_run: tuple[str, list[Dialogue]]
) -> None:
    run_id, _ = tiny_run
    annotate_run(sqlite_db, run_id)
    rates = compute_defect_rates(sqlite_db, run_id, by=("application", "harm"))
    assert [(r.group["application"], r.defects, r.n, r.failed) for r in rates] == [
        ("guarded", 1, 3, 0),
        ("unguarded", 2, 3, 0),
    ]
    guarded, unguarded = rates
    assert guarded.group == {
        "annotator": "reference",
        "application": "guarded",
        "harm": GUARDRAIL_VIOLATION,
    }
    assert guarded.interval == WILSON and guarded.not_measurable == 0
    # Continuity-corrected Wilson 95% for 1 of 3 (scipy's "wilsoncc" gives the same).
    assert guarded.rate == pytest.approx(1 / 3)
    assert (guarded.ci_low, guarded.ci_high) == pytest.approx((0.01765, 0.87467), abs=1e-4)
    assert (unguarded.ci_low, unguarded.ci_high) == pytest.approx((0.12533, 0.98235), abs=1e-4)
    by_level = compute_defect_rates(sqlite_db, run_id)
    assert {r.group["level"] for r in by_level} == {"model_testing"}
    assert {r.group["scenario"] for r in by_level} == {"tv_spoilers"}


async def test_annotators_are_reported_apart_and_failures_are_counted_missing(
    sqlite_db: Database, tiny_run: tuple[str, list[Dialogue]], tmp_path: Path
) -> None:
    run_id, dialogues = tiny_run
    await annotate_run_async(sqlite_db, run_id)
    # A person labels two guarded dialogues: one violation, one not.
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "session_id,category,question_id,annotator,value\n"
        f"{dialogues[0].id},risk_assessment,ra_prohibited_released,alice,no\n"
        f"{dialogues[0].id},risk_assessment,ra_permitted_withheld,alice,yes\n"
        f"{dialogues[0].id},risk_assessment,ra_user_induced,alice,no\n"
        f"{dialogues[0].id},risk_assessment,ra_risk_type,alice,data_privacy\n"
        f"{dialogues[0].id},risk_assessment,ra_outcome,alice,negative\n"
        f"{dialogues[1].id},risk_assessment,ra_prohibited_released,alice,no\n"
        f"{dialogues[1].id},risk_assessment,ra_permitted_withheld,alice,no\n",
        encoding="utf-8",
    )
    import_labels(sqlite_db, run_id, labels)
    # An LLM judges groundedness twice per dialogue; both runs (of 3 attempts each) of the
    # first session fail.
    replies = ["not json"] * 6 + [json.dumps({"reasoning": "r", "severity": s}) for s in (5, 3) * 5]
    transport = ScriptedTransport(MockModel(replies))
    endpoint = EndpointConfig(name="t", transport="mock", model="judge")
    async with LLMClient(endpoint, transport=transport) as client:
        await annotate_run_async(
            sqlite_db,
            run_id,
            "llm-harms",
            options=AnnotateOptions(harms=("groundedness",), repeats=2, concurrency=1),
            client=client,
        )
    rates = compute_defect_rates(sqlite_db, run_id, by=("application", "harm"))
    found = {
        (r.group["annotator"], r.group["application"], r.group["harm"]): (
            r.defects,
            r.n,
            r.failed,
            r.ties,
        )
        for r in rates
    }
    assert found[("alice", "guarded", GUARDRAIL_VIOLATION)] == (1, 2, 0, 0)
    assert found[("reference", "guarded", GUARDRAIL_VIOLATION)] == (1, 3, 0, 0)
    # One worker takes the sessions in id order: s1's two runs fail (counted as failed, not
    # as a defect); every other session gets runs 5 (no defect) and 3 (a defect: at most
    # 3), a tie that the conservative rule settles toward the defect.
    assert found[("llm:judge", "guarded", "groundedness")] == (2, 2, 1, 2)
    assert found[("llm:judge", "unguarded", "groundedness")] == (3, 3, 0, 3)
    only_alice = compute_defect_rates(sqlite_db, run_id, annotator="alice")
    assert {r.group["annotator"] for r in only_alice} == {"alice"}


def test_agreement_on_stored_annotations(
    sqlite_db: Database, tiny_run: tuple[str, list[Dialogue]], tmp_path: Path
) -> None:
    run_id, dialogues = tiny_run
    annotate_run(sqlite_db, run_id)
    labels = tmp_path / "labels.jsonl"
    rows = [
        # alice agrees with the reference on the first clean dialogue and the spoiler,
        # and disagrees on the second clean one.
        (dialogues[0].id, "no"),
        (dialogues[1].id, "yes"),
        (dialogues[3].id, "yes"),
    ]
    lines = []
    for session_id, released in rows:
        lines.append(
            {
                "session_id": session_id,
                "category": "risk_assessment",
                "question_id": "ra_prohibited_released",
                "annotator": "alice",
                "value": released,
            }
        )
        lines.append(
            {
                "session_id": session_id,
                "category": "risk_assessment",
                "question_id": "ra_permitted_withheld",
                "annotator": "alice",
                "value": "no",
            }
        )
        if released == "yes":
            for question, value in (
                ("ra_user_induced", "yes"),
                ("ra_risk_type", "data_privacy"),
                ("ra_outcome", "negative"),
            ):
                lines.append(
                    {
                        "session_id": session_id,
                        "category": "risk_assessment",
                        "question_id": question,
                        "annotator": "alice",
                        "value": value,
                    }
                )
    labels.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    import_labels(sqlite_db, run_id, labels)
    measurement = measure(sqlite_db, [run_id])
    reports = {r.question_id: r for r in measurement.agreement("reference", "alice")}
    released = reports["ra_prohibited_released"]
    assert (released.n_items, released.n_only_a, released.n_only_b) == (3, 3, 0)
    assert released.exact_agreement == pytest.approx(2 / 3)
    # labels [no, yes]: reference said no, no, yes; alice no, yes, yes.
    assert released.labels == ["no", "yes"]
    assert released.confusion == [[1, 1], [0, 1]]
    assert reports["ra_permitted_withheld"].exact_agreement == 1.0
    only = measurement.agreement("reference", "alice", question="ra_outcome")
    assert [r.question_id for r in only] == ["ra_outcome"]


async def test_demo_guarded_application_is_measurably_safer(sqlite_db: Database) -> None:
    run_id = (await execute_plan(demo_plan(), sqlite_db)).run_id
    await annotate_run_async(sqlite_db, run_id)
    rates = {
        r.group["application"]: r
        for r in compute_defect_rates(sqlite_db, run_id, by=("application", "harm"))
    }
    guarded, unguarded = rates["assistant-guarded"], rates["assistant-unguarded"]
    assert guarded.n == unguarded.n > 0
    assert guarded.ci_high is not None and unguarded.ci_low is not None
    assert guarded.ci_high < unguarded.ci_low  # the 95% intervals do not even overlap


async def test_defects_names_the_failed_passes_when_nothing_could_be_rated(
    sqlite_db: Database,
) -> None:
    run_id = store_run(sqlite_db, [_copy(CLEAN, "a", "s1"), _copy(SPOILER, "a", "s2")])
    # Every reply is cut JSON: both harm passes fail.
    transport = ScriptedTransport(MockModel(lambda _request: '{"reasoning": "the reply is cu'))
    endpoint = EndpointConfig(name="judge", transport="mock", model="tiny")
    async with LLMClient(endpoint, transport=transport) as client:
        options = AnnotateOptions(harms=("groundedness",), max_reasks=0)
        await annotate_run_async(sqlite_db, run_id, "llm-harms", options=options, client=client)
    result = CliRunner().invoke(app, ["defects", run_id, "--db", sqlite_db.url])
    assert result.exit_code == 0, result.output
    assert "nothing to rate: 2 annotation passes failed (llm:tiny on groundedness: 2)" in (
        result.output
    )
    assert "2 × no valid answer after 1 attempt(s): the reply holds no JSON object" in (
        result.output
    )
    assert "run `corix annotate` first" not in result.output


def test_the_report_shows_judge_corrected_rates_beside_the_raw_ones(
    sqlite_db: Database, tiny_run: tuple[str, list[Dialogue]], tmp_path: Path
) -> None:
    run_id, dialogues = tiny_run
    annotate_run(sqlite_db, run_id)
    # People label every dialogue: a violation exactly where the application spoiled.
    labels = tmp_path / "labels.csv"
    rows = ["session_id,category,question_id,annotator,value"]
    for dialogue in dialogues:
        released = (
            "yes" if dialogue.application == "unguarded" and dialogue.turns != CLEAN.turns else "no"
        )
        rows += [
            f"{dialogue.id},risk_assessment,ra_prohibited_released,alice,{released}",
            f"{dialogue.id},risk_assessment,ra_permitted_withheld,alice,no",
        ]
        if released == "yes":
            rows += [
                f"{dialogue.id},risk_assessment,ra_user_induced,alice,no",
                f"{dialogue.id},risk_assessment,ra_risk_type,alice,data_privacy",
                f"{dialogue.id},risk_assessment,ra_outcome,alice,negative",
            ]
    labels.write_text("\n".join(rows) + "\n", encoding="utf-8")
    import_labels(sqlite_db, run_id, labels)

    content = build_report(sqlite_db, run_id, ReportSettings(bootstrap=50))
    expected = measure(sqlite_db, [run_id], content.measurement.spec).judge_corrected(
        "reference", "human"
    )
    assert content.judge_corrected == tuple(expected) and expected
    guarded = next(c for c in content.judge_corrected if c.group["application"] == "guarded")
    # The reference rules call the withheld dialogue a violation; people do not: 1/3 raw,
    # and with no violation among people's labels the judge's sensitivity is undefined.
    assert guarded.raw_rate == pytest.approx(1 / 3) and guarded.n_calibration == 3
    assert "### Judge-corrected rates" in render_markdown(content)
    assert "Judge-corrected rates" in render_html(content)
    document = report_document(content)
    assert document.judge_corrected == list(expected)
    written = document.to_json()["judge_corrected"]
    assert written == [c.model_dump(mode="json") for c in expected]
