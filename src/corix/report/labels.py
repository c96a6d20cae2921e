"""Readable names for tree nodes and questions.

A split node's copies are named after their template in the tree file (e.g.
``safety_level``); the report names each copy after its split value instead ("Red
teaming"). A question node is named after its question, explained by the schema's text.
"""

from __future__ import annotations

from corix.assessment import AnnotationSchema
from corix.measurement import NodeResult, TreeSpec
from corix.measurement.stored_leaves import HARM_CATEGORY_PREFIX
from corix.report.formatting import words


def node_label(spec: TreeSpec, node: NodeResult) -> str:
    instance = spec.node(node.id)
    if node.label == instance.template and node.context and instance.question is None:
        split_value = list(node.context.values())[-1]
        return words(split_value).capitalize()
    return node.label or node.id


def question_text(schema: AnnotationSchema, question_id: str) -> str:
    """The question as annotators read it; harm severities and questionnaire items by name."""
    if question_id.startswith(HARM_CATEGORY_PREFIX):
        return f"Severity under the '{question_id.removeprefix(HARM_CATEGORY_PREFIX)}' harm pack"
    for question in schema.questions():
        if question.id == question_id:
            return question.text
    return words(question_id)
