"""Readable names for what the record stores by id: tree nodes, questions, answers, annotators.

Readers of a report see words; the ids stay in the JSON report and the exports. A split
node's copies are named after their template in the tree file (e.g. ``safety_level``); the
report names each copy after its split value instead ("Red teaming"). A question node is
named by its question as people were asked it: the schema's text for annotator questions,
the scenario pack's wording for questionnaire items.
"""

from __future__ import annotations

from collections.abc import Mapping

from corix.assessment import (
    HUMAN_ANNOTATOR_PREFIX,
    LLM_ANNOTATOR_PREFIX,
    AnnotationSchema,
    AnnotatorKind,
    HarmPack,
    QuestionType,
)
from corix.measurement import HARM_CATEGORY_PREFIX, NodeResult, TreeSpec, item_wordings
from corix.report.formatting import words
from corix.scenarios import PACK_FOLDERS, resolve_pack

SOURCE_LABELS = {
    AnnotatorKind.HUMAN.value: "people",
    AnnotatorKind.LLM.value: "LLM judges",
    AnnotatorKind.REFERENCE.value: "reference rules",
}
"""Annotator sources (kinds) as readers call them; the reference annotator shares its name."""

CORRECTED_NOTE = (
    "A machine judge's raw rate beside its correction (Rogan–Gladen) for its sensitivity and "
    "specificity measured against people's labels on the dialogues both labelled."
)


_QUESTIONNAIRE_LEVELS = ["field_testing", "red_teaming"]


def annotator_label(name: str) -> str:
    """An annotator or annotator source: a person by username, an LLM judge by its model."""
    if name.startswith(HUMAN_ANNOTATOR_PREFIX):
        return name.removeprefix(HUMAN_ANNOTATOR_PREFIX)
    if name.startswith(LLM_ANNOTATOR_PREFIX):
        return f"LLM judge ({name.removeprefix(LLM_ANNOTATOR_PREFIX)})"
    return SOURCE_LABELS.get(name, name)


def category_label(category: str, harm_packs: Mapping[str, HarmPack]) -> str:
    """An annotation category: a harm category by its pack's title, a schema one in words."""
    if category.startswith(HARM_CATEGORY_PREFIX):
        harm = category.removeprefix(HARM_CATEGORY_PREFIX)
        pack = harm_packs.get(harm)
        return pack.title if pack is not None else words(harm)
    return words(category)


def question_texts(schema: AnnotationSchema, harm_packs: Mapping[str, HarmPack]) -> dict[str, str]:
    """Question id → the question as annotators read it (harm severities by pack title)."""
    texts = {question.id: question.text for question in schema.questions()}
    for harm, pack in harm_packs.items():
        texts[f"{HARM_CATEGORY_PREFIX}{harm}"] = f"Severity: {pack.title}"
    return texts


def answer_label(schema: AnnotationSchema, question_id: str, value: str) -> str:
    """An answer as people chose it: a choice by its option's label, other answers as given."""
    for question in schema.questions():
        if question.id == question_id and question.type is QuestionType.CHOICE:
            return next((o.label for o in question.options if o.value == value), value)
    return value


def item_label(item_id: str, scenario: str | None = None, level: str | None = None) -> str:
    """A questionnaire item as testers read it: in ``scenario``'s wording at ``level`` where
    those are given and ask it, else the wording every pack shares, else the first pack's
    and a note that the wording differs by scenario."""
    every_scenario = sorted(PACK_FOLDERS.names())
    for scenarios, levels in (
        ([scenario] if scenario else every_scenario, [level] if level else _QUESTIONNAIRE_LEVELS),
        ([scenario] if scenario else every_scenario, _QUESTIONNAIRE_LEVELS),
        (every_scenario, _QUESTIONNAIRE_LEVELS),
    ):
        wordings = list(
            dict.fromkeys(
                wording
                for name in scenarios
                for at in levels
                if (wording := item_wordings(resolve_pack(name)).get((at, item_id)))
            )
        )
        if wordings:
            return wordings[0] if len(wordings) == 1 else f"{wordings[0]} (worded per scenario)"
    return words(item_id)


def node_label(spec: TreeSpec, node: NodeResult, questions: Mapping[str, str]) -> str:
    """A node as readers know it; ``questions`` maps annotator question ids to their text."""
    instance = spec.node(node.id)
    question = instance.question
    if question is not None:
        if question in questions:
            return questions[question]
        scenarios = instance.filter.scenario
        levels = instance.filter.level
        return item_label(
            question,
            next(iter(scenarios)) if scenarios and len(scenarios) == 1 else None,
            next(iter(levels)) if levels and len(levels) == 1 else None,
        )
    if node.label == instance.template and node.context:
        split_value = list(node.context.values())[-1]
        return words(split_value).capitalize()
    return node.label or node.id
