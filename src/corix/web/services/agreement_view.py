"""Agreement per question for an evaluation series: human–human and human–LLM.

Labels are the measurement core's settled labels (one per annotator and item, repeats
settled by the default rule); the statistics come from :mod:`corix.assessment.agreement`.
An item is one dialogue (dialogue-level questions) or one turn (turn-level questions).

Agreement between people is measured on their own labels: a senior's resolution replaces
the values it resolves, so counting it would report a settled disagreement as agreement.
Against the LLM annotators, the people's side is their consensus, where a senior's
resolution is the people's final word.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

from sqlalchemy import select

from corix.assessment import (
    AgreementReport,
    AnnotationSchema,
    LabelRow,
    Question,
    compare,
    krippendorff_alpha,
)
from corix.measurement.core import Measurement, measure
from corix.measurement.spec import AnnotatorSelector, MeasurementSpec
from corix.storage import Database
from corix.storage.measured import evaluation_runs
from corix.storage.orm import AnnotationPassRow, SessionRow

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


def pairwise_agreement(rows: list[LabelRow]) -> tuple[int, float | None]:
    """Items with two or more labels, and the share of agreeing pairs among them."""
    by_item: defaultdict[str, list[str | float]] = defaultdict(list)
    for row in rows:
        by_item[row.item_id].append(row.value)
    agreeing = pairs = items = 0
    for values in by_item.values():
        if len(values) < 2:
            continue
        items += 1
        for a, b in combinations(values, 2):
            pairs += 1
            agreeing += a == b
    return items, (agreeing / pairs if pairs else None)


def agreement_by_question(
    db: Database, schema: AnnotationSchema, evaluation_id: str
) -> list[QuestionAgreement]:
    runs = evaluation_runs(db, evaluation_id)
    kinds = _annotator_kinds(db, runs) & {"human", "llm"}
    # Only people and LLM annotators are compared: the (often many) reference passes
    # are left out of both measurements, which keeps the page quick.
    none: dict[str, dict[str, list[LabelRow]]] = {HUMANS: {}, MACHINES: {}}
    own = resolved = none
    if "human" in kinds:
        human_only = MeasurementSpec(
            annotators=(AnnotatorSelector(kind="human"),), use_resolutions=False
        )
        own = _rows_by_kind(measure(db, runs, human_only, schema=schema))
    if kinds == {"human", "llm"}:
        both = tuple(AnnotatorSelector(kind=kind) for kind in ("human", "llm"))
        resolved = _rows_by_kind(measure(db, runs, MeasurementSpec(annotators=both), schema=schema))
    results = []
    for question in schema.questions():
        people = own[HUMANS].get(question.id, [])
        settled_people = resolved[HUMANS].get(question.id, [])
        models = resolved[MACHINES].get(question.id, [])
        items, pairwise = pairwise_agreement(people)
        alpha = krippendorff_alpha(people, ordinal=question.is_ordinal) if people else None
        versus = None
        if settled_people and models:
            versus = compare(
                [*settled_people, *models],
                HUMANS,
                MACHINES,
                groups={
                    HUMANS: sorted({r.annotator for r in settled_people}),
                    MACHINES: sorted({r.annotator for r in models}),
                },
                ordinal=question.is_ordinal,
            )
        results.append(QuestionAgreement(question, items, pairwise, alpha, versus))
    return results


def _annotator_kinds(db: Database, run_ids: list[str]) -> set[str]:
    with db.session() as s:
        return set(
            s.scalars(
                select(AnnotationPassRow.annotator_kind)
                .join(SessionRow, SessionRow.id == AnnotationPassRow.session_id)
                .where(SessionRow.run_id.in_(run_ids))
                .distinct()
            )
        )


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
