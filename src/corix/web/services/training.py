"""Annotator training material: exemplars for every answer, and gold dialogues for the test.

Both are YAML files shipped with corix, loaded through the config layer and checked against
the annotation schema, so an exemplar or gold answer that the schema cannot take is a load
error naming the file, not a silently wrong lesson.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from corix.assessment import AnnotationSchema, QuestionLevel
from corix.assessment.answers import Answer, is_shown, normalize_value
from corix.config import parse_yaml_model
from corix.domain import JsonObject
from corix.errors import ConfigError

EXEMPLARS_RESOURCE = "training/exemplars.yaml"
GOLD_RESOURCE = "training/gold.yaml"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Exemplar(_Model):
    """A short exchange that earns ``answer`` to ``question``, and why."""

    question: str
    answer: str
    user: str
    assistant: str
    why: str


class ExemplarSet(_Model):
    version: str
    exemplars: list[Exemplar] = Field(min_length=1)

    def by_question(self) -> dict[str, list[Exemplar]]:
        grouped: defaultdict[str, list[Exemplar]] = defaultdict(list)
        for exemplar in self.exemplars:
            grouped[exemplar.question].append(exemplar)
        return dict(grouped)


class GoldTurn(_Model):
    user: str
    assistant: str


class GoldDialogue(_Model):
    """A dialogue with the screening answers an experienced annotator gives."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    scenario: str
    context: JsonObject = Field(default_factory=dict)
    turns: list[GoldTurn] = Field(min_length=1)
    answers: dict[str, str] = Field(min_length=1)
    explanation: str


class GoldSet(_Model):
    version: str
    dialogues: list[GoldDialogue] = Field(min_length=1)


def _read(resource: str) -> tuple[str, str]:
    text = resources.files("corix.web").joinpath(resource).read_text(encoding="utf-8")
    return text, f"corix.web/{resource}"


@cache
def builtin_exemplars(schema: AnnotationSchema) -> ExemplarSet:
    text, source = _read(EXEMPLARS_RESOURCE)
    exemplars = parse_yaml_model(text, ExemplarSet, source=source)
    check_exemplars(schema, exemplars, source=source)
    return exemplars


@cache
def builtin_gold(schema: AnnotationSchema) -> GoldSet:
    text, source = _read(GOLD_RESOURCE)
    gold = parse_yaml_model(text, GoldSet, source=source)
    check_gold(schema, gold, source=source)
    return gold


def check_exemplars(schema: AnnotationSchema, exemplars: ExemplarSet, *, source: str) -> None:
    known = {question.id: question for question in schema.questions()}
    for index, exemplar in enumerate(exemplars.exemplars):
        question = known.get(exemplar.question)
        where = f"exemplars.{index}"
        if question is None:
            raise ConfigError(
                f"unknown question '{exemplar.question}'", path=source, field=f"{where}.question"
            )
        try:
            normalize_value(question, exemplar.answer)
        except ValueError as exc:
            raise ConfigError(str(exc), path=source, field=f"{where}.answer") from None


def check_gold(schema: AnnotationSchema, gold: GoldSet, *, source: str) -> None:
    """Gold answers must be screening questions, valid, and not answer a hidden follow-up."""
    screening = schema.screening_category
    seen: set[str] = set()
    for index, dialogue in enumerate(gold.dialogues):
        where = f"dialogues.{index}"
        if dialogue.id in seen:
            raise ConfigError(f"duplicate id '{dialogue.id}'", path=source, field=f"{where}.id")
        seen.add(dialogue.id)
        values: dict[tuple[str, int | None], str | float] = {}
        for question_id, raw in dialogue.answers.items():
            field = f"{where}.answers.{question_id}"
            question = next((q for q in screening.questions if q.id == question_id), None)
            if question is None or question.level is not QuestionLevel.DIALOGUE:
                raise ConfigError(
                    f"not a dialogue-level question of '{screening.id}'", path=source, field=field
                )
            try:
                values[(question_id, None)] = normalize_value(question, raw)
            except ValueError as exc:
                raise ConfigError(str(exc), path=source, field=field) from None
        for question in screening.questions:
            if question.id in dialogue.answers and not is_shown(question, values, None):
                raise ConfigError(
                    "answers a follow-up that the other gold answers hide",
                    path=source,
                    field=f"{where}.answers.{question.id}",
                )


def gold_answers(schema: AnnotationSchema, dialogue: GoldDialogue) -> list[Answer]:
    screening = schema.screening_category
    return [
        Answer(
            question_id=question_id,
            value=normalize_value(screening.question(question_id), raw),
        )
        for question_id, raw in dialogue.answers.items()
    ]
