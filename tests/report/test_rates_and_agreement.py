"""The measurement core on a tiny run whose numbers are derived by hand.

The tiny run (see ``support.run_builder.write_tiny_run``): the reference annotator finds a
violation in s1 only; the LLM's repeats on s1 say yes, yes, no and on s3 yes, no; a
person's two passes on s3 say no, yes. Each dialogue counts once per annotator source.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.assessment import builtin_harm_packs
from corix.assessment.annotation_run import annotate_run_async
from corix.cli.main import app
from corix.domain import Level
from corix.errors import ConfigError
from corix.measurement.core import measure
from corix.measurement.defect_rates import WILSON, DefectRate
from corix.measurement.spec import AnnotatorSelector, MeasurementSpec
from corix.measurement.stats.wilson import wilson_cc_bounds
from corix.report.agreement import annotator_agreement
from corix.storage import Database, load_passes
from support.run_builder import RunBuilder, write_tiny_run
from support.web_records import resolve


def _violations(db: Database, run_id: str, **spec: object) -> dict[tuple[str, str], DefectRate]:
    measurement = measure(db, [run_id], MeasurementSpec.model_validate(spec))
    rates = measurement.rates(by=("harm", "application"))
    return {
        (r.group["source"], r.group["application"]): r
        for r in rates
        if r.group["harm"] == "guardrail_violation"
    }


async def test_each_dialogue_counts_once_per_source(sqlite_db: Database) -> None:
    run_id = await write_tiny_run(sqlite_db)
    rates = _violations(sqlite_db, run_id)
    reference = rates[("reference", "alpha")]
    assert (reference.defects, reference.n) == (1, 2)
    assert reference.defect_dialogues == ["s1"] and reference.dialogues == ["s1", "s2"]
    assert (reference.ci_low, reference.ci_high) == pytest.approx(wilson_cc_bounds(0.5, 2, 0.95))
    assert reference.interval == WILSON
    # Three LLM repeats on s1 (yes, yes, no) are one dialogue, not three samples.
    assert (rates[("llm", "alpha")].defects, rates[("llm", "alpha")].n) == (1, 1)
    # The unfinished s5 is not counted anywhere.
    assert all("s5" not in r.dialogues for r in rates.values())


async def test_conservative_ties_go_toward_risk_and_are_counted(sqlite_db: Database) -> None:
    run_id = await write_tiny_run(sqlite_db)
    conservative = _violations(sqlite_db, run_id)
    majority = _violations(sqlite_db, run_id, settling="majority")
    # s3: the LLM's two repeats and the person's two passes tie, yes against no.
    for source in ("llm", "human"):
        assert conservative[(source, "beta")].defects == 1
        assert conservative[(source, "beta")].ties == 1
        assert majority[(source, "beta")].defects == 0
    kept = _violations(sqlite_db, run_id, settling="keep-disagreement")
    assert kept[("human", "beta")].defects == pytest.approx(0.5)


async def test_rates_are_ordered_by_testing_level(sqlite_db: Database) -> None:
    run_id = await write_tiny_run(sqlite_db)
    rates = measure(sqlite_db, [run_id]).rates(by=("harm", "level"))
    reference = [
        r
        for r in rates
        if r.group["source"] == "reference" and r.group["harm"] == "guardrail_violation"
    ]
    assert [r.group["level"] for r in reference] == [
        "model_testing",
        "red_teaming",
        "field_testing",
    ]
    assert [(r.defects, r.n) for r in reference] == [(1, 2), (0, 1), (0, 1)]


async def test_defect_rates_use_each_packs_threshold(sqlite_db: Database) -> None:
    run_id = await write_tiny_run(sqlite_db)
    packs = builtin_harm_packs()
    rates = [r for r in measure(sqlite_db, [run_id]).rates() if r.group["harm"] == "groundedness"]
    assert len(rates) == 1
    assert rates[0].defects == int(packs["groundedness"].is_defect(4.0))
    assert rates[0].n == 1 and rates[0].dialogues == ["s1"]


async def test_selectors_choose_annotators_and_unknown_ones_are_refused(
    sqlite_db: Database,
) -> None:
    run_id = await write_tiny_run(sqlite_db)
    only_llm = MeasurementSpec(annotators=(AnnotatorSelector(kind="llm"),))
    sources = {r.group["source"] for r in measure(sqlite_db, [run_id], only_llm).rates()}
    assert sources == {"llm"}
    unknown = MeasurementSpec(annotators=(AnnotatorSelector(name="llm:gpt-5"),))
    with pytest.raises(ConfigError, match=r"annotators\.0.*llm:gpt-5"):
        measure(sqlite_db, [run_id], unknown)


async def test_dialogues_without_a_reply_are_not_measurable(sqlite_db: Database) -> None:
    run = RunBuilder("run-silent")
    run.session("answered", "alpha", "tv_spoilers", Level.MODEL_TESTING, [("Hi", "Hello")])
    run.session("silent", "alpha", "tv_spoilers", Level.MODEL_TESTING, [("Hi", None)])
    for session_id in ("answered", "silent"):
        run.annotate(
            session_id,
            "risk_assessment",
            "reference",
            [("ra_prohibited_released", None, "no"), ("ra_permitted_withheld", None, "no")],
        )
    run_id = await run.write(sqlite_db)
    measurement = measure(sqlite_db, [run_id])
    (rate,) = [r for r in measurement.rates() if r.group["harm"] == "guardrail_violation"]
    # The silent dialogue is neither a defect nor a non-defect: it is left out and counted.
    assert (rate.defects, rate.n, rate.not_measurable) == (0, 1, 1)
    assert rate.not_measurable_reasons == {"no application reply": 1}  # it ended normally
    assert [d.session_id for d in measurement.not_measurable] == ["silent"]


async def test_annotators_skip_dialogues_without_a_reply(sqlite_db: Database) -> None:
    run = RunBuilder("run-skip")
    run.session("answered", "alpha", "tv_spoilers", Level.MODEL_TESTING, [("Hi", "Hello")])
    run.session("silent", "alpha", "tv_spoilers", Level.MODEL_TESTING, [("Hi", None)])
    run_id = await run.write(sqlite_db)
    await annotate_run_async(sqlite_db, run_id)
    annotated = {stored.session_id for stored in load_passes(sqlite_db)}
    assert annotated == {"answered"}


async def test_agreement_compares_settled_labels_per_question(sqlite_db: Database) -> None:
    run_id = await write_tiny_run(sqlite_db)
    pairs = {(p.a, p.b): p for p in annotator_agreement(measure(sqlite_db, [run_id]))}
    assert set(pairs) == {
        ("human:ann1", "llm:mock"),
        ("human:ann1", "reference"),
        ("llm:mock", "reference"),
    }
    released = next(
        r
        for r in pairs[("llm:mock", "reference")].reports
        if r.question_id == "ra_prohibited_released"
    )
    # s1: yes / yes; s3: yes (a tie settled toward risk) / no.
    assert released.n_items == 2
    assert released.exact_agreement == pytest.approx(0.5)
    # The person's tied passes on s3 settle on yes, which the reference did not say.
    person = pairs[("human:ann1", "reference")].reports
    assert [(r.question_id, r.n_items, r.exact_agreement) for r in person] == [
        ("ra_prohibited_released", 1, 0.0)
    ]


async def test_a_senior_resolution_replaces_the_human_values_it_resolves(
    sqlite_db: Database,
) -> None:
    run_id = await write_tiny_run(sqlite_db)
    resolve(sqlite_db, "s3", "risk_assessment", "ra_prohibited_released", "resolved", "no")
    rates = _violations(sqlite_db, run_id)
    # The person's tied passes (no, yes) gave a violation; the resolution says no.
    human = rates[("human", "beta")]
    assert (human.defects, human.resolved, human.unresolved, human.ties) == (0, 1, 0, 0)
    # Resolutions decide human disagreements only: the LLM's tie still stands.
    assert rates[("llm", "beta")].defects == 1
    ignored = _violations(sqlite_db, run_id, use_resolutions=False)
    assert ignored[("human", "beta")].defects == 1


async def test_an_unresolved_disagreement_is_counted_and_kept(sqlite_db: Database) -> None:
    run_id = await write_tiny_run(sqlite_db)
    resolve(sqlite_db, "s3", "risk_assessment", "ra_prohibited_released", "unresolved")
    human = _violations(sqlite_db, run_id)[("human", "beta")]
    assert (human.defects, human.resolved, human.unresolved) == (1, 0, 1)


async def test_agreement_measures_own_labels_not_resolutions(
    sqlite_db: Database, tmp_path: Path
) -> None:
    """The senior settles s3 as "no", as the reference said. Rates use the resolution; the
    person's agreement with the reference stays what the person said (yes on s3: 0%), in
    the report and in ``corix agreement --run`` alike."""
    run_id = await write_tiny_run(sqlite_db)
    resolve(sqlite_db, "s3", "risk_assessment", "ra_prohibited_released", "resolved", "no")
    measurement = measure(sqlite_db, [run_id])
    pairs = {(p.a, p.b): p for p in annotator_agreement(measurement)}
    report = [
        (r.question_id, r.n_items, r.exact_agreement)
        for r in pairs[("human:ann1", "reference")].reports
    ]
    assert report == [("ra_prohibited_released", 1, 0.0)]
    shown = CliRunner().invoke(
        app,
        [
            "agreement",
            "--run",
            run_id,
            "--a",
            "human:ann1",
            "--b",
            "reference",
            "--db",
            sqlite_db.url,
            "--json",
        ],
    )
    assert shown.exit_code == 0, shown.output
    compared = [r for r in json.loads(shown.output) if r["n_items"]]
    assert [(r["question_id"], r["n_items"], r["exact_agreement"]) for r in compared] == report
    # The resolution still settles the label that rates and trees use.
    label = next(
        label
        for label in measurement.labels
        if label.annotator == "human:ann1" and label.question == "ra_prohibited_released"
    )
    assert (label.settled.value, label.own.value, label.resolved) == ("no", "yes", True)


async def test_the_settlement_names_annotators_ties_resolutions_and_left_out_dialogues(
    sqlite_db: Database,
) -> None:
    run_id = await write_tiny_run(sqlite_db)
    resolve(sqlite_db, "s3", "risk_assessment", "ra_prohibited_released", "resolved", "no")
    settlement = measure(sqlite_db, [run_id]).settlement
    inputs = {a.name: (a.kind, a.dialogues, a.passes, a.failed) for a in settlement.annotators}
    assert inputs == {
        "human:ann1": ("human", 1, 2, 0),
        # s1 three repeats, s3 two; the failed utility pass of s2 still names s2.
        "llm:mock": ("llm", 3, 5, 1),
        # s1: risk, content and groundedness; s2: risk and utility; s3, s4: risk.
        "reference": ("reference", 4, 7, 0),
    }
    # Only the LLM's s3 (yes, no) tied, as a label and as a verdict; the person's s3 tie
    # was resolved (both passes now say no). s5 never finished: not a measured dialogue.
    assert (settlement.rule, settlement.label_ties, settlement.verdict_ties) == (
        "conservative",
        1,
        1,
    )
    assert (settlement.resolved, settlement.unresolved, settlement.measured) == (1, 0, 4)
    assert settlement.not_measurable == {}
    assert "3 dialogues" in settlement.text() and "1 resolved" in settlement.text()
