"""Agreement between the annotators of a run, per question, for every pair of annotators.

An item is one dialogue (dialogue-level questions) or one turn (turn-level questions).
An annotator with several passes over an item is compared through its consensus over
them (see :func:`corix.assessment.compare`), so each annotator counts once per item.
Free-text questions are left out: exact agreement of prose means nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

from corix.assessment import AgreementReport, AnnotationSchema, LabelRow, compare_per_question
from corix.assessment.schema import QuestionType
from corix.measurement.leaves import LeafSource
from corix.measurement.stored_leaves import HARM_CATEGORY_PREFIX, StoredAnswer


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of annotators ``a`` and ``b``, one report per question both answered."""

    a: str
    b: str
    reports: tuple[AgreementReport, ...]


def annotator_agreement(
    answers: Iterable[StoredAnswer], schema: AnnotationSchema
) -> list[PairAgreement]:
    """Every pair of annotators present in ``answers`` (sorted by name)."""
    kinds = {question.id: question.type for question in schema.questions()}
    rows: list[LabelRow] = []
    owner: dict[str, str] = {}
    for answer in answers:
        if answer.source is not LeafSource.ANNOTATION:
            continue
        if kinds.get(answer.question) is QuestionType.TEXT:
            continue
        member = f"{answer.respondent}#{'c' if answer.pass_no is None else answer.pass_no}"
        owner[member] = answer.respondent
        ordinal = _is_ordinal(answer.question, kinds)
        rows.append(
            LabelRow(
                item_id=_item_id(answer),
                annotator=member,
                value=float(answer.value) if ordinal else answer.value,
                question_id=answer.question,
            )
        )
    groups: defaultdict[str, list[str]] = defaultdict(list)
    for member in sorted(owner):
        groups[owner[member]].append(member)
    ordinal_questions = {row.question_id for row in rows if row.question_id}
    ordinal_questions = {q for q in ordinal_questions if _is_ordinal(q, kinds)}
    pairs = []
    for a, b in combinations(sorted(groups), 2):
        pair_rows = [row for row in rows if owner[row.annotator] in (a, b)]
        reports = compare_per_question(
            pair_rows,
            a,
            b,
            groups={a: groups[a], b: groups[b]},
            ordinal_questions=ordinal_questions,
        )
        pairs.append(PairAgreement(a, b, tuple(r for r in reports if r.n_items)))
    return pairs


def _is_ordinal(question: str, kinds: dict[str, QuestionType]) -> bool:
    # Sliders and harm severities are ordered numbers; everything else is a label.
    return kinds.get(question) is QuestionType.SLIDER or question.startswith(HARM_CATEGORY_PREFIX)


def _item_id(answer: StoredAnswer) -> str:
    turn = "" if answer.turn_index is None else f"#turn{answer.turn_index}"
    return f"{answer.session_id}{turn}"
