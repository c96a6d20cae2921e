"""Agreement per question for an evaluation series: human–human and human–LLM.

Labels are the measurement core's settled labels (one per annotator and item, repeats
settled by the default rule); the statistics come from :mod:`corix.assessment.agreement`.
An item is one dialogue (dialogue-level questions) or one turn (turn-level questions).
As everywhere, agreement compares the annotators' own labels: a senior's resolution
settles the labels that rates and trees use, but is not an annotator's judgement.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from corix.assessment import AnnotationSchema, Question
from corix.assessment.agreement import (
    AgreementReport,
    LabelRow,
    compare,
    krippendorff_alpha,
    pairwise_agreement,
)
from corix.measurement import AnnotatorSelector, Measurement, MeasurementSpec, measure
from corix.report import annotator_label
from corix.storage import Database, evaluation_runs
from corix.storage.web.passes import annotator_kinds

HUMANS = "humans"
MACHINES = "llm"


@dataclass(frozen=True)
class QuestionAgreement:
    question: Question
    human_items: int
    """Items labelled by at least two people: the items human–human agreement is about."""
    human_pairwise: float | None
    """Share of agreeing pairs of people over those items."""
    human_alpha: float | None
    human_vs_llm: AgreementReport | None


@dataclass(frozen=True)
class AgreementPage:
    """Agreement per question, under the measurement ``headline`` that produced it
    (``None`` when nothing was measured: no people or LLM annotators yet)."""

    headline: str | None
    rows: list[QuestionAgreement]


def agreement_by_question(
    db: Database, schema: AnnotationSchema, evaluation_id: str
) -> AgreementPage:
    runs = evaluation_runs(db, evaluation_id)
    kinds = annotator_kinds(db, runs) & {"human", "llm"}
    # Only people and LLM annotators are compared: the (often many) reference passes
    # are left out of the measurement, which keeps the page quick.
    by_kind: dict[str, dict[str, list[LabelRow]]] = {HUMANS: {}, MACHINES: {}}
    headline = None
    if kinds:
        selected = tuple(AnnotatorSelector(kind=kind) for kind in sorted(kinds))
        measurement = measure(db, runs, MeasurementSpec(annotators=selected), schema=schema)
        by_kind = _rows_by_kind(measurement)
        headline = measurement.headline(annotator_label)
    results = []
    for question in schema.questions():
        people = by_kind[HUMANS].get(question.id, [])
        models = by_kind[MACHINES].get(question.id, [])
        items, pairwise = pairwise_agreement(people, ordinal=question.is_ordinal)
        alpha = krippendorff_alpha(people, ordinal=question.is_ordinal) if people else None
        versus = None
        if people and models:
            versus = compare(
                [*people, *models],
                HUMANS,
                MACHINES,
                groups={
                    HUMANS: sorted({r.annotator for r in people}),
                    MACHINES: sorted({r.annotator for r in models}),
                },
                ordinal=question.is_ordinal,
            )
        results.append(QuestionAgreement(question, items, pairwise, alpha, versus))
    return AgreementPage(headline, results)


def _rows_by_kind(measurement: Measurement) -> dict[str, dict[str, list[LabelRow]]]:
    """Label rows of people (``HUMANS``) and of LLM annotators (``MACHINES``) per question."""
    kinds = measurement.annotators()
    found: dict[str, defaultdict[str, list[LabelRow]]] = {
        HUMANS: defaultdict(list),
        MACHINES: defaultdict(list),
    }
    for row in measurement.label_rows():
        side = {"human": HUMANS, "llm": MACHINES}.get(kinds.get(row.annotator, ""))
        if row.question_id is not None and side is not None:
            found[side][row.question_id].append(row)
    return {side: dict(rows) for side, rows in found.items()}
