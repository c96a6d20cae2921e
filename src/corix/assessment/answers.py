"""Answers to schema questions: validation, normalization and category gating.

Human forms and LLM annotators both produce :class:`Answer` values; both go through
:func:`validate_answers` before anything is stored, so a pass in storage always fits the
schema it was made under. Every problem in a pass is reported at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from corix.assessment.schema import (
    NO,
    YES,
    AnnotationSchema,
    AnyOf,
    Category,
    Question,
    QuestionLevel,
    QuestionType,
)
from corix.errors import CorixError
from corix.storage import StoredAnswer

__all__ = [
    "Answer",
    "AnswerKey",
    "AnswerProblem",
    "AnswerValidationError",
    "AnswerValue",
    "categories_for",
    "is_shown",
    "is_violation",
    "normalize_value",
    "validate_answers",
]

AnswerValue = str | float
# Answers are keyed by question and turn; dialogue-level answers have no turn.
AnswerKey = tuple[str, int | None]

_YES_NO_WORDS = {"yes": YES, "y": YES, "true": YES, "no": NO, "n": NO, "false": NO}


class Answer(BaseModel):
    """One answer to one question: for a turn-level question, about one turn.

    ``value`` is ``None`` when an optional question was skipped. Booleans are read as
    yes/no, the stored form of a yes/no answer.
    """

    model_config = ConfigDict(frozen=True)

    question_id: str
    turn_index: int | None = Field(default=None, ge=0)
    value: AnswerValue | None = None
    reasoning: str | None = None

    @field_validator("value", mode="before")
    @classmethod
    def _bool_as_yes_no(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return YES if value else NO
        return value

    @property
    def key(self) -> AnswerKey:
        return (self.question_id, self.turn_index)


class AnswerProblem(BaseModel):
    """Why one answer (or one missing answer) does not fit the schema."""

    question_id: str
    turn_index: int | None = None
    message: str

    def __str__(self) -> str:
        turn = f" (turn {self.turn_index})" if self.turn_index is not None else ""
        return f"{self.question_id}{turn}: {self.message}"


class AnswerValidationError(CorixError):
    """A pass does not fit its category; ``problems`` lists every problem found."""

    def __init__(self, category_id: str, problems: list[AnswerProblem]) -> None:
        self.category_id = category_id
        self.problems = problems
        listing = "\n".join(f"  - {problem}" for problem in problems)
        super().__init__(f"answers to category '{category_id}' do not fit the schema:\n{listing}")


def normalize_value(question: Question, value: AnswerValue) -> AnswerValue:
    """Return ``value`` in the stored form for ``question``; raise ``ValueError`` if it cannot be.

    Yes/no answers become ``"yes"`` / ``"no"``, slider answers floats within range,
    choices one of the option values, text a stripped non-empty string.
    """
    if question.type is QuestionType.YES_NO:
        word = _YES_NO_WORDS.get(str(value).strip().lower())
        if word is None:
            raise ValueError(f"expected yes or no, got {value!r}")
        return word
    if question.type is QuestionType.SLIDER:
        return _slider_value(question, value)
    if question.type is QuestionType.CHOICE:
        choice = str(value).strip().lower()
        allowed = question.allowed_values()
        if choice not in allowed:
            raise ValueError(f"unknown choice {value!r}; expected one of: {', '.join(allowed)}")
        return choice
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected non-empty text")
    return value.strip()


def _slider_value(question: Question, value: AnswerValue) -> float:
    low, high = question.slider_range
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"expected a number, got {value!r}") from None
    if not math.isfinite(number) or not low <= number <= high:
        raise ValueError(f"{number:g} is outside the slider's range {low:g}–{high:g}")
    return number


HIDDEN_FOLLOW_UP = "answered, but this follow-up is hidden by earlier answers"


def is_shown(
    question: Question, values: Mapping[AnswerKey, AnswerValue], turn_index: int | None
) -> bool:
    """Whether ``question`` is asked, given the normalized answers so far.

    A condition on a turn-level question is read on the same turn; a condition whose
    question was not answered (e.g. because it was itself hidden) does not hold.
    """
    if question.show_if is None:
        return True
    return _holds(question.show_if, values, turn_index)


def _holds(rule: AnyOf, values: Mapping[AnswerKey, AnswerValue], turn_index: int | None) -> bool:
    # A question's answers are keyed either by turn or by None, never both (its level
    # decides), so looking up both keys finds the one that applies.
    return any(
        values.get((condition.question, turn_index)) == condition.equals
        or values.get((condition.question, None)) == condition.equals
        for condition in rule.any_of
    )


def validate_answers(
    schema: AnnotationSchema,
    category_id: str,
    answers: Iterable[Answer],
    n_turns: int,
) -> list[Answer]:
    """Check one pass against its category and return the answers in stored form.

    Raises :class:`AnswerValidationError` listing, per question and turn: unknown
    questions, turn indexes that do not fit the question's level, duplicate answers,
    values that do not fit the question (slider out of range, unknown choice…), answers
    to follow-ups that are hidden, and required questions left unanswered.

    The result is ordered by question, then turn. Skipped (``None``) answers to
    visible optional questions are kept, since they may carry reasoning.
    """
    if n_turns < 0:
        raise ValueError(f"n_turns must be >= 0, got {n_turns}")
    category = schema.category(category_id)
    problems: list[AnswerProblem] = []
    accepted: dict[AnswerKey, Answer] = {}
    rejected: set[AnswerKey] = set()  # already reported; not reported again as missing
    for answer in answers:
        try:
            accepted[answer.key] = _accept(schema, category, answer, n_turns, accepted)
        except ValueError as exc:
            rejected.add(answer.key)
            problems.append(
                AnswerProblem(
                    question_id=answer.question_id, turn_index=answer.turn_index, message=str(exc)
                )
            )

    values = {key: a.value for key, a in accepted.items() if a.value is not None}
    result: list[Answer] = []
    for question in category.questions:
        turns = [None] if question.level is QuestionLevel.DIALOGUE else list(range(n_turns))
        for turn in turns:
            given = accepted.get((question.id, turn))
            answered = given is not None and given.value is not None
            if not is_shown(question, values, turn):
                values.pop((question.id, turn), None)  # a hidden answer cannot open others
                if answered:
                    problems.append(
                        AnswerProblem(
                            question_id=question.id,
                            turn_index=turn,
                            message=HIDDEN_FOLLOW_UP,
                        )
                    )
                continue
            if question.required and not answered and (question.id, turn) not in rejected:
                problems.append(
                    AnswerProblem(
                        question_id=question.id, turn_index=turn, message="required, missing"
                    )
                )
            if given is not None:
                result.append(given)
    if problems:
        raise AnswerValidationError(category.id, problems)
    return result


def _accept(
    schema: AnnotationSchema,
    category: Category,
    answer: Answer,
    n_turns: int,
    accepted: Mapping[AnswerKey, Answer],
) -> Answer:
    """Return ``answer`` in stored form, or raise ``ValueError`` saying why it does not fit."""
    question = next((q for q in category.questions if q.id == answer.question_id), None)
    if question is None:
        owners = [
            c.id for c in schema.categories if any(q.id == answer.question_id for q in c.questions)
        ]
        where = f"belongs to category '{owners[0]}'" if owners else "is not in the schema"
        raise ValueError(f"not a question of category '{category.id}': it {where}")
    if question.level is QuestionLevel.DIALOGUE and answer.turn_index is not None:
        raise ValueError("dialogue-level question answered for a turn")
    if question.level is QuestionLevel.TURN:
        if answer.turn_index is None:
            raise ValueError("turn-level question answered without a turn index")
        if answer.turn_index >= n_turns:
            raise ValueError(f"turn index out of range (the dialogue has {n_turns} turns)")
    if answer.key in accepted:
        raise ValueError("answered more than once")
    if answer.value is None:
        return answer
    return answer.model_copy(update={"value": normalize_value(question, answer.value)})


def is_violation(schema: AnnotationSchema, risk_answers: Iterable[Answer]) -> bool:
    """Whether the screening answers (ARIA: risk assessment) record a guardrail violation."""
    deciding = set(schema.violation.question_ids())
    values: dict[AnswerKey, AnswerValue] = {}
    for answer in risk_answers:
        if answer.question_id in deciding and answer.value is not None:
            question = schema.question(answer.question_id)
            values[answer.key] = normalize_value(question, answer.value)
    return _holds(schema.violation, values, None)


def categories_for(schema: AnnotationSchema, risk_answers: Iterable[Answer]) -> list[str]:
    """The ids of the categories a dialogue is annotated with, in the order they are asked.

    Categories gated on a violation are included only when ``risk_answers`` record one;
    the others (ARIA: risk assessment and dialogue utility) always are.
    """
    violation = is_violation(schema, risk_answers)
    return [
        category.id
        for category in schema.ordered_categories()
        if violation or not category.gate.requires_violation
    ]


def answer_records(answers: Iterable[Answer]) -> tuple[StoredAnswer, ...]:
    """Answers as the storage records them."""
    return tuple(StoredAnswer(a.question_id, a.turn_index, a.value, a.reasoning) for a in answers)
