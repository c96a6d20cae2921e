"""Structured output for LLM annotators: the JSON schema asked for, and reading replies back.

The schema is built from the annotation schema's questions (one object per question with
``reasoning`` first, then ``value``; turn-level questions under ``turns.turn_<i>``) or
from a harm pack's scale (``reasoning``, ``severity``). Follow-ups and optional questions
accept ``null``. Every object lists all its properties as required and forbids others,
which is what strict structured-output modes demand. Closed answers are enums, scales
integer ranges, and every ``reasoning`` is bounded (:func:`reasoning_chars`), so the
longest reply that fits the schema is known: :func:`corix.llm.reply_tokens` sizes ``max_tokens``
from it, and a constrained reply is never cut.

Replies are read leniently and judged strictly: code fences and text around the JSON
object are tolerated, a bare value is accepted where an ``{reasoning, value}`` object was
asked for, and then the answers go through :func:`~corix.assessment.validate_answers`.
Anything that does not fit raises :class:`ReplyProblems`, whose message is what the model
is told when it is asked again.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from corix.assessment.annotators.base import SEVERITY
from corix.assessment.answers import (
    HIDDEN_FOLLOW_UP,
    Answer,
    AnswerValidationError,
    validate_answers,
)
from corix.assessment.harms import HarmPack
from corix.assessment.schema import (
    AnnotationSchema,
    Category,
    Question,
    QuestionLevel,
    QuestionType,
)
from corix.domain import JsonObject, JsonSchema
from corix.errors import CorixError

TURNS_KEY = "turns"


class ReplyProblems(CorixError):
    """A reply could not be used; ``problems`` says why, one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def turn_key(index: int) -> str:
    return f"turn_{index}"


def _object(properties: JsonSchema) -> JsonSchema:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _value_schema(question: Question) -> JsonSchema:
    if question.type in (QuestionType.YES_NO, QuestionType.CHOICE):
        schema: JsonSchema = {"type": "string", "enum": list(question.allowed_values())}
    elif question.type is QuestionType.SLIDER:
        low, high = question.slider_range
        whole = low.is_integer() and high.is_integer()
        schema = {
            "type": "integer" if whole else "number",
            "minimum": int(low) if whole else low,
            "maximum": int(high) if whole else high,
        }
    else:
        schema = {"type": "string", "minLength": 1}
    if question.show_if is not None or not question.required:
        return {"anyOf": [schema, {"type": "null"}]}
    return schema


REASONING_MAX_CHARS = 240
"""The longest ``reasoning`` asked for: a sentence or two with a quote. Small models left
unbounded reason until they hit ``max_tokens`` and the JSON is cut."""
COMPACT_REASONING_MAX_CHARS = 100
"""The longest ``reasoning`` in the compact form (a small context window): a short quote.
A turn-level category over three turns asks for twelve reasons; at 240 characters each
the reply's room alone left no 4,096-token window space for the dialogue."""


def reasoning_chars(*, compact: bool) -> int:
    """The bound on every ``reasoning`` in the full or the compact form."""
    return COMPACT_REASONING_MAX_CHARS if compact else REASONING_MAX_CHARS


def _answer_schema(question: Question, reasoning: JsonSchema) -> JsonSchema:
    return _object({"reasoning": reasoning, "value": _value_schema(question)})


def _reasoning(compact: bool) -> JsonSchema:
    return {"type": "string", "maxLength": reasoning_chars(compact=compact)}


def category_schema(category: Category, n_turns: int, *, compact: bool = False) -> JsonSchema:
    """The JSON schema of one pass over ``category`` for a dialogue of ``n_turns`` turns."""
    reasoning = _reasoning(compact)
    properties = {
        q.id: _answer_schema(q, reasoning)
        for q in category.questions
        if q.level is QuestionLevel.DIALOGUE
    }
    turn_questions = [q for q in category.questions if q.level is QuestionLevel.TURN]
    if turn_questions:
        per_turn = _object({q.id: _answer_schema(q, reasoning) for q in turn_questions})
        properties[TURNS_KEY] = _object({turn_key(i): per_turn for i in range(n_turns)})
    return _object(properties)


def harm_schema(pack: HarmPack, *, compact: bool = False) -> JsonSchema:
    """The JSON schema of a severity judgment on ``pack``'s scale."""
    return _object(
        {
            "reasoning": _reasoning(compact),
            SEVERITY: {"type": "integer", "minimum": pack.scale.min, "maximum": pack.scale.max},
        }
    )


def response_format(name: str, schema: JsonSchema) -> JsonObject:
    """OpenAI's ``response_format`` asking for strict output that fits ``schema``."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


MAX_REPLY_CHARS = 200_000
"""A judgement is a few hundred words; a reply far longer is refused, not scanned."""
_MAX_OBJECT_STARTS = 50


def extract_json(text: str) -> JsonObject:
    """The first JSON object in ``text``, ignoring code fences and any text around it.

    Total: any reply (empty, huge, deeply nested, not JSON at all) gives an object or
    :class:`ReplyProblems` saying why not. Control characters inside strings are
    accepted as they are.
    """
    if len(text) > MAX_REPLY_CHARS:
        limit = f"more than a judgement may have ({MAX_REPLY_CHARS:,})"
        raise ReplyProblems([f"the reply has {len(text):,} characters, {limit}"])
    # Not strict: raw line breaks inside strings pass. llama-cpp-python's grammar for a
    # JSON string admits them, and SmolLM2 writes them (3 of the first 31 pilot passes).
    decoder = json.JSONDecoder(strict=False)
    start = text.find("{")
    for _ in range(_MAX_OBJECT_STARTS):
        if start == -1:
            break
        try:
            value, _end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        except RecursionError:
            raise ReplyProblems(["the reply's JSON is nested too deeply"]) from None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ReplyProblems(["the reply holds no JSON object"])


def _split_answer(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, dict):
        reasoning = raw.get("reasoning")
        return raw.get("value"), reasoning if isinstance(reasoning, str) else None
    return raw, None


def _answer(question: Question, raw: Any, turn: int | None) -> Answer | None:
    value, reasoning = _split_answer(raw)
    if value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        value = str(value)  # rejected by validation with a clear message
    if not isinstance(value, str | int | float):
        value = json.dumps(value)
    return Answer(question_id=question.id, turn_index=turn, value=value, reasoning=reasoning)


@dataclass(frozen=True)
class CategoryReply:
    """A category pass read from a reply: its answers, and the answers it gave to follow-ups
    that its own earlier answers hide (dropped, not a failure), as ``question (turn i)``."""

    answers: list[Answer]
    dropped: tuple[str, ...] = ()


def read_category_reply(
    schema: AnnotationSchema, category: Category, n_turns: int, text: str
) -> CategoryReply:
    """The validated answers in a reply to a category prompt; raise :class:`ReplyProblems`.

    A model that answers a follow-up its earlier answers hide (a schema cannot say "null
    unless…") has answered more than asked: those answers are dropped and named in the
    result; every other problem fails the reply.
    """
    payload = extract_json(text)
    answers: list[Answer] = []
    problems: list[str] = []
    turns = payload.get(TURNS_KEY)
    for question in category.questions:
        if question.level is QuestionLevel.DIALOGUE:
            answer = _answer(question, payload.get(question.id), None)
            answers += [answer] if answer else []
            continue
        if not isinstance(turns, dict):
            problems.append(f"'{TURNS_KEY}' must be an object with one entry per turn")
            break
        for index in range(n_turns):
            entry = turns.get(turn_key(index))
            if not isinstance(entry, dict):
                continue  # reported as missing answers below
            answer = _answer(question, entry.get(question.id), index)
            answers += [answer] if answer else []
    dropped: tuple[str, ...] = ()
    try:
        validated = validate_answers(schema, category.id, answers, n_turns)
    except AnswerValidationError as exc:
        hidden = {
            (p.question_id, p.turn_index) for p in exc.problems if p.message == HIDDEN_FOLLOW_UP
        }
        problems += [str(p) for p in exc.problems if p.message != HIDDEN_FOLLOW_UP]
        validated = []
        if hidden and not problems:
            kept = [a for a in answers if (a.question_id, a.turn_index) not in hidden]
            try:
                validated = validate_answers(schema, category.id, kept, n_turns)
            except AnswerValidationError as again:
                problems += [str(p) for p in again.problems]
            dropped = tuple(
                f"{question} (turn {turn})" if turn is not None else question
                for question, turn in sorted(hidden, key=lambda key: (key[0], key[1] or -1))
            )
    if problems:
        raise ReplyProblems(problems)
    return CategoryReply(validated, dropped)


def read_harm_reply(pack: HarmPack, text: str) -> Answer:
    """The severity answer in a reply to a harm prompt; raise :class:`ReplyProblems`."""
    payload = extract_json(text)
    raw = payload.get(SEVERITY)
    reasoning = payload.get("reasoning")
    if isinstance(raw, str):
        try:
            raw = float(raw.strip())
        except ValueError:
            raise ReplyProblems([f"{SEVERITY}: expected a whole number, got {raw!r}"]) from None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ReplyProblems([f"{SEVERITY}: required, a whole number on the scale"])
    if not float(raw).is_integer() or not pack.scale.contains(raw):
        raise ReplyProblems(
            [f"{SEVERITY}: {raw!r} is not a whole number from {pack.scale.min} to {pack.scale.max}"]
        )
    return Answer(
        question_id=SEVERITY,
        value=float(raw),
        reasoning=reasoning if isinstance(reasoning, str) else None,
    )
