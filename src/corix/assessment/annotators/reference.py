"""The reference annotator: deterministic, explainable ARIA judgments against the test packet.

It runs offline, needs no model and gives the same pass every time; its rules are in
:mod:`corix.assessment.annotators.aria_rules`. Passes are stored under the name
``reference``.
"""

from __future__ import annotations

from corix.assessment.annotators.aria_rules import CATEGORY_RULES, RULES_VERSION
from corix.assessment.annotators.base import (
    AnnotatorKind,
    AnnotatorProvenance,
    AnnotatorSetup,
    PassResult,
)
from corix.assessment.annotators.evidence import EvidenceCache
from corix.assessment.annotators.view import AnnotatorView
from corix.assessment.answers import AnswerValidationError, validate_answers
from corix.assessment.schema import AnnotationSchema

REFERENCE_NAME = "reference"
REFERENCE_VERSION = "1.0"


class ReferenceAnnotator:
    """Answers every ARIA category it has rules for (all five of the built-in schema)."""

    kind = AnnotatorKind.REFERENCE
    deterministic = True

    def __init__(self, schema: AnnotationSchema) -> None:
        self._schema = schema
        self._evidence = EvidenceCache()
        self._provenance = AnnotatorProvenance(
            annotator=REFERENCE_NAME,
            version=REFERENCE_VERSION,
            kind=AnnotatorKind.REFERENCE,
            guideline_version=f"{RULES_VERSION}/{schema.id}-{schema.version}",
        )

    @property
    def name(self) -> str:
        return REFERENCE_NAME

    def targets(self) -> tuple[str, ...]:
        return tuple(c.id for c in self._schema.ordered_categories() if c.id in CATEGORY_RULES)

    async def annotate(self, view: AnnotatorView, target: str, *, seed: int) -> PassResult:
        return self.judge(view, target)

    def judge(self, view: AnnotatorView, target: str) -> PassResult:
        """The pass for ``target`` (a category id), computed synchronously."""
        rules = CATEGORY_RULES.get(target)
        if rules is None:
            raise ValueError(f"the reference annotator has no rules for '{target}'")
        try:
            answers = rules(self._evidence.get(view))
            validated = validate_answers(self._schema, target, answers, len(view.turns))
        except (ValueError, AnswerValidationError) as exc:
            return PassResult(category=target, error=str(exc), provenance=self._provenance)
        return PassResult(category=target, answers=tuple(validated), provenance=self._provenance)


def reference_annotator(setup: AnnotatorSetup) -> ReferenceAnnotator:
    return ReferenceAnnotator(setup.schema)
