"""The annotation schema: categories of questions that annotators answer about a dialogue.

A schema is configuration. It lives in YAML, is validated on load (errors name the file,
the field and the line) and is immutable once loaded. The built-in schema follows ARIA's
five categories; a team may ship its own with :func:`load_schema`.

Cross-references are checked when the schema is built, so a follow-up that points at a
question which does not exist, or at a value that question can never take, is a load
error rather than a follow-up that silently never shows.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from corix.config import load_yaml_model, parse_yaml_model
from corix.errors import unknown_name

YES = "yes"
NO = "no"
YES_NO_VALUES = (YES, NO)

Identifier = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]

BUILTIN_SCHEMA_RESOURCE = "schemas/aria.yaml"


class QuestionLevel(StrEnum):
    """What one answer is about: the whole dialogue, or one turn of it."""

    DIALOGUE = "dialogue"
    TURN = "turn"


class QuestionType(StrEnum):
    YES_NO = "yes_no"
    SLIDER = "slider"
    CHOICE = "choice"
    TEXT = "text"


class _SchemaModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _yes_no_from_bool(value: Any) -> Any:
    # YAML 1.1 reads a bare ``yes`` / ``no`` as a boolean; the schema's values are words.
    if isinstance(value, bool):
        return YES if value else NO
    return value


class Option(_SchemaModel):
    """One choice: the stored ``value`` and the ``label`` shown to people."""

    value: Identifier
    label: str

    @model_validator(mode="before")
    @classmethod
    def _from_bare_value(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"value": data, "label": data.replace("_", " ").capitalize()}
        return data


class Condition(_SchemaModel):
    """Holds when the answer to ``question`` equals ``equals``."""

    question: Identifier
    equals: str

    _equals_from_bool = field_validator("equals", mode="before")(_yes_no_from_bool)


class AnyOf(_SchemaModel):
    """Holds when at least one condition holds.

    A single condition may be written on its own (``{question: q, equals: yes}``); it is
    read as an ``any_of`` of one, so there is only one shape to evaluate.
    """

    any_of: tuple[Condition, ...] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _from_single_condition(cls, data: Any) -> Any:
        if isinstance(data, dict) and "question" in data:
            return {"any_of": [data]}
        return data

    def question_ids(self) -> list[str]:
        return [condition.question for condition in self.any_of]


class Question(_SchemaModel):
    """One question. ``text`` is shown to people, ``guidance`` is given to LLM annotators."""

    id: Identifier
    text: str
    guidance: str
    level: QuestionLevel
    type: QuestionType
    required: bool = True
    min: float | None = None
    max: float | None = None
    min_label: str | None = None
    max_label: str | None = None
    options: tuple[Option, ...] = ()
    show_if: AnyOf | None = None

    @model_validator(mode="after")
    def _check_type_fields(self) -> Self:
        slider_fields = (self.min, self.max, self.min_label, self.max_label)
        if self.type is QuestionType.SLIDER:
            if self.min is None or self.max is None:
                raise ValueError("a slider needs both 'min' and 'max'")
            if self.min >= self.max:
                raise ValueError(f"slider 'min' ({self.min:g}) must be below 'max' ({self.max:g})")
        elif any(value is not None for value in slider_fields):
            raise ValueError(
                f"'min', 'max' and their labels only apply to sliders, not {self.type}"
            )
        if self.type is QuestionType.CHOICE:
            values = [option.value for option in self.options]
            if len(values) < 2:
                raise ValueError("a choice needs at least two options")
            duplicates = sorted({value for value in values if values.count(value) > 1})
            if duplicates:
                raise ValueError(f"duplicate option values: {', '.join(duplicates)}")
        elif self.options:
            raise ValueError(f"'options' only apply to choices, not {self.type}")
        return self

    @property
    def slider_range(self) -> tuple[float, float]:
        if self.min is None or self.max is None:
            raise TypeError(f"question '{self.id}' is a {self.type} question, not a slider")
        return (self.min, self.max)

    @property
    def is_ordinal(self) -> bool:
        """Answers are ordered numbers (so medians and ±1 agreement make sense)."""
        return self.type is QuestionType.SLIDER

    def allowed_values(self) -> tuple[str, ...]:
        """The closed set of answers for yes/no and choice questions; empty otherwise."""
        if self.type is QuestionType.YES_NO:
            return YES_NO_VALUES
        return tuple(option.value for option in self.options)


class Gate(_SchemaModel):
    """Which dialogues a category is asked about."""

    requires_violation: bool = False


class Category(_SchemaModel):
    """A group of questions answered together in one pass."""

    id: Identifier
    title: str
    description: str = ""
    level: QuestionLevel
    order: int
    gate: Gate = Gate()
    questions: tuple[Question, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_follow_ups(self) -> Self:
        # A follow-up may only depend on an earlier question of its own category: answers
        # are validated one category at a time and asked in order, which also rules out cycles.
        earlier: dict[str, Question] = {}
        for question in self.questions:
            if question.show_if is not None:
                for condition in question.show_if.any_of:
                    _check_condition(condition, earlier, f"question '{question.id}': show_if")
                    source = earlier[condition.question]
                    if question.level is QuestionLevel.DIALOGUE and (
                        source.level is QuestionLevel.TURN
                    ):
                        raise ValueError(
                            f"question '{question.id}' is dialogue-level, so it cannot depend "
                            f"on the turn-level question '{source.id}'"
                        )
            earlier[question.id] = question
        return self

    def question(self, question_id: str) -> Question:
        for question in self.questions:
            if question.id == question_id:
                return question
        raise unknown_name(
            f"question in category '{self.id}'", question_id, (q.id for q in self.questions)
        )


def _check_condition(condition: Condition, known: dict[str, Question], where: str) -> None:
    source = known.get(condition.question)
    if source is None:
        raise ValueError(
            f"{where} refers to '{condition.question}', which is not an earlier question "
            f"of the same category"
        )
    allowed = source.allowed_values()
    if not allowed:
        raise ValueError(
            f"{where} refers to '{source.id}', a {source.type} question; conditions need "
            f"a yes/no or choice question"
        )
    if condition.equals not in allowed:
        raise ValueError(
            f"{where} expects '{source.id}' to equal '{condition.equals}', which it never "
            f"can (allowed: {', '.join(allowed)})"
        )


class AnnotationSchema(_SchemaModel):
    """Categories of questions, and the rule that decides whether a dialogue has a violation."""

    id: Identifier
    version: str
    title: str
    description: str = ""
    violation: AnyOf
    categories: tuple[Category, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_consistency(self) -> Self:
        _require_unique("category id", [c.id for c in self.categories])
        _require_unique("category order", [str(c.order) for c in self.categories])
        _require_unique("question id", [q.id for c in self.categories for q in c.questions])
        screening = self._screening_category()
        if screening.gate.requires_violation:
            raise ValueError(
                f"category '{screening.id}' decides whether there is a violation, "
                f"so it cannot itself require one"
            )
        for category in self.categories:
            if category.gate.requires_violation and category.order <= screening.order:
                raise ValueError(
                    f"category '{category.id}' requires a violation, so it must come after "
                    f"'{screening.id}' (order {category.order} <= {screening.order})"
                )
        return self

    def _screening_category(self) -> Category:
        owners = {self._owner_of(qid) for qid in self.violation.question_ids()}
        if len(owners) != 1:
            raise ValueError(
                "violation: all conditions must refer to questions of one category, "
                f"found {', '.join(sorted(c.id for c in owners))}"
            )
        category = owners.pop()
        dialogue_questions = {
            q.id: q for q in category.questions if q.level is QuestionLevel.DIALOGUE
        }
        for condition in self.violation.any_of:
            _check_condition(condition, dialogue_questions, "violation")
        return category

    def _owner_of(self, question_id: str) -> Category:
        for category in self.categories:
            if any(q.id == question_id for q in category.questions):
                return category
        raise ValueError(f"violation refers to unknown question '{question_id}'")

    @property
    def screening_category(self) -> Category:
        """The category that decides whether there is a violation; it is asked first."""
        return self._screening_category()

    def ordered_categories(self) -> list[Category]:
        return sorted(self.categories, key=lambda category: category.order)

    def category(self, category_id: str) -> Category:
        for category in self.categories:
            if category.id == category_id:
                return category
        raise unknown_name("category", category_id, (c.id for c in self.categories))

    def questions(self) -> Iterator[Question]:
        for category in self.ordered_categories():
            yield from category.questions

    def question(self, question_id: str) -> Question:
        for question in self.questions():
            if question.id == question_id:
                return question
        raise unknown_name("question", question_id, (q.id for q in self.questions()))


def _require_unique(what: str, values: list[str]) -> None:
    duplicates = sorted({value for value in values if values.count(value) > 1})
    if duplicates:
        raise ValueError(f"duplicate {what}: {', '.join(duplicates)}")


def load_schema(path: Path) -> AnnotationSchema:
    """Load a schema from a YAML file; errors name the file, the field and the line."""
    return load_yaml_model(path, AnnotationSchema)


def load_builtin_schema() -> AnnotationSchema:
    """The built-in schema: ARIA's five annotation categories."""
    resource = resources.files("corix.assessment").joinpath(BUILTIN_SCHEMA_RESOURCE)
    return parse_yaml_model(
        resource.read_text(encoding="utf-8"),
        AnnotationSchema,
        source=f"corix.assessment/{BUILTIN_SCHEMA_RESOURCE}",
    )
