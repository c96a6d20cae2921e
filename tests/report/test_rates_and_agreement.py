"""Violation and defect rates with their sessions, and agreement between a run's annotators."""

from __future__ import annotations

import pytest
from report_support import write_tiny_run

from corix.assessment import builtin_harm_packs, load_builtin_schema, wilson_interval
from corix.measurement.stored_leaves import StoredAnswer, iter_stored_answers
from corix.report.agreement import annotator_agreement
from corix.report.rates import defect_rates_by_pass, violation_rates
from corix.storage import Database


@pytest.fixture
async def answers(sqlite_db: Database) -> list[StoredAnswer]:
    return list(iter_stored_answers(sqlite_db, await write_tiny_run(sqlite_db)))


def test_violation_rates_per_annotator_keep_disagreements(answers: list[StoredAnswer]) -> None:
    rates = violation_rates(answers, load_builtin_schema(), by=("application", "annotator"))
    table = {(r.group["application"], r.group["annotator"]): r for r in rates}
    reference = table[("alpha", "reference")]
    # s1 (violation) and s2 (none).
    assert (reference.hits, reference.n) == (1, 2)
    assert reference.hit_sessions == ("s1",) and reference.sessions == ("s1", "s2")
    assert (reference.ci_low, reference.ci_high) == pytest.approx(wilson_interval(1, 2))
    # The person's two passes over s3 disagree: both count, one violation.
    person = table[("beta", "human:ann1")]
    assert (person.hits, person.n, person.hit_sessions) == (1, 2, ("s3",))
    # The LLM's stored consensus on s3 says yes; its three runs on s1 settle on yes.
    assert table[("beta", "llm:mock")].hits == 1
    assert table[("alpha", "llm:mock")].hit_sessions == ("s1",)


def test_rates_are_ordered_by_testing_level(answers: list[StoredAnswer]) -> None:
    rates = violation_rates(answers, load_builtin_schema(), by=("level",))
    assert [r.group["level"] for r in rates] == ["model_testing", "red_teaming", "field_testing"]
    assert [(r.hits, r.n) for r in rates] == [(4, 6), (0, 1), (0, 1)]


def test_defect_rates_use_each_packs_threshold(answers: list[StoredAnswer]) -> None:
    packs = builtin_harm_packs()
    rates = defect_rates_by_pass(answers, packs)
    assert len(rates) == 1
    rate = rates[0]
    assert rate.group["harm"] == "groundedness"
    # Groundedness severity 4 of 5: a defect only at or below the pack's threshold.
    assert rate.hits == int(packs["groundedness"].is_defect(4.0))
    assert rate.n == 1 and rate.sessions == ("s1",)


def test_agreement_compares_every_pair_per_question(answers: list[StoredAnswer]) -> None:
    pairs = {(p.a, p.b): p for p in annotator_agreement(answers, load_builtin_schema())}
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
    # s1: yes / yes; s3: yes / no.
    assert released.n_items == 2
    assert released.exact_agreement == pytest.approx(0.5)
    # The person's two passes on s3 (no, yes) tie; the tie goes to "no", as the reference said.
    person = pairs[("human:ann1", "reference")].reports
    assert [(r.question_id, r.n_items, r.exact_agreement) for r in person] == [
        ("ra_prohibited_released", 1, 1.0)
    ]
    assert person[0].n_group_ties == 1
