"""Annotation forms: field names, reading a submitted pass, and checking it against the schema.

A dialogue-level question is the field ``a:QUESTION``; a turn-level one ``a:QUESTION:TURN``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from corix.assessment import AnnotationSchema, Category, Question, QuestionLevel
from corix.assessment.answers import (
    Answer,
    AnswerKey,
    AnswerValidationError,
    AnswerValue,
    is_shown,
    normalize_value,
    validate_answers,
)
from corix.web.services.service_errors import InputError

MAX_NOTE_CHARS = 5000


def field_name(question_id: str, turn_index: int | None = None, *, prefix: str = "a") -> str:
    if turn_index is None:
        return f"{prefix}:{question_id}"
    return f"{prefix}:{question_id}:{turn_index}"


def _turns_of(question: Question, n_turns: int) -> list[int | None]:
    return [None] if question.level is QuestionLevel.DIALOGUE else list(range(n_turns))


def read_answers(
    category: Category, form: Mapping[str, str], n_turns: int, *, prefix: str = "a"
) -> list[Answer]:
    """The answers given in ``form``, without those to follow-ups that do not apply.

    A follow-up is moot once the answer it depends on changes (a radio button cannot be
    cleared without JavaScript), so its answer is dropped rather than refused.
    """
    given: list[Answer] = []
    values: dict[AnswerKey, AnswerValue] = {}
    for question in category.questions:
        for turn in _turns_of(question, n_turns):
            raw = (form.get(field_name(question.id, turn, prefix=prefix)) or "").strip()
            if not raw or not is_shown(question, values, turn):
                continue
            given.append(Answer(question_id=question.id, turn_index=turn, value=raw))
            with contextlib.suppress(ValueError):  # reported by validation below
                values[(question.id, turn)] = normalize_value(question, raw)
    return given


def checked_answers(
    schema: AnnotationSchema,
    category: Category,
    form: Mapping[str, str],
    n_turns: int,
    *,
    prefix: str = "a",
) -> list[Answer]:
    """Validated answers in stored form; every problem is reported against its form field."""
    answers = read_answers(category, form, n_turns, prefix=prefix)
    try:
        return validate_answers(schema, category.id, answers, n_turns)
    except AnswerValidationError as exc:
        problems = {
            field_name(p.question_id, p.turn_index, prefix=prefix): _friendly(p.message)
            for p in exc.problems
        }
        raise InputError("some answers are missing or not valid", problems) from None


def _friendly(message: str) -> str:
    return "please answer this question" if message == "required, missing" else message


def read_note(form: Mapping[str, str]) -> str | None:
    note = (form.get("note") or "").strip()
    if len(note) > MAX_NOTE_CHARS:
        raise InputError(
            f"the note is limited to {MAX_NOTE_CHARS} characters", {"note": "too long"}
        )
    return note or None
