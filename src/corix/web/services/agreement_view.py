"""Agreement per question for an evaluation series: human–human and human–LLM.

The statistics come from :mod:`corix.assessment.agreement`; this module only gathers the
stored passes into label rows. An item is one dialogue (dialogue-level questions) or one
turn (turn-level questions).
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
from corix.storage import Database
from corix.storage.orm import AnnotationAnswerRow, AnnotationPassRow, RunRow, SessionRow

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
    human: defaultdict[str, list[LabelRow]] = defaultdict(list)
    machine: defaultdict[str, list[LabelRow]] = defaultdict(list)
    with db.session() as s:
        rows = s.execute(
            select(
                AnnotationPassRow.session_id,
                AnnotationPassRow.annotator,
                AnnotationPassRow.annotator_kind,
                AnnotationPassRow.pass_no,
                AnnotationPassRow.repeat_no,
                AnnotationAnswerRow.question_id,
                AnnotationAnswerRow.turn_index,
                AnnotationAnswerRow.value_num,
                AnnotationAnswerRow.value_text,
            )
            .join(AnnotationAnswerRow, AnnotationAnswerRow.pass_id == AnnotationPassRow.id)
            .join(SessionRow, SessionRow.id == AnnotationPassRow.session_id)
            .join(RunRow, RunRow.id == SessionRow.run_id)
            .where(RunRow.evaluation_id == evaluation_id, AnnotationPassRow.status == "ok")
        )
        for session_id, annotator, kind, pass_no, repeat, question_id, turn, number, text in rows:
            value: str | float | None = number if number is not None else text
            if value is None:
                continue
            item = session_id if turn is None else f"{session_id}:{turn}"
            if kind == "human":
                human[question_id].append(
                    LabelRow(
                        item_id=item, annotator=annotator, value=value, question_id=question_id
                    )
                )
            else:
                # Repeats of one model count as members of the machine group, whose
                # per-item consensus is what people are compared with.
                machine[question_id].append(
                    LabelRow(
                        item_id=item,
                        annotator=f"{annotator}#{pass_no}.{repeat}",
                        value=value,
                        question_id=question_id,
                    )
                )
    results = []
    for question in schema.questions():
        people = human.get(question.id, [])
        models = machine.get(question.id, [])
        items, pairwise = pairwise_agreement(people)
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
    return results
