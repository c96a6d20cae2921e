"""Automated annotators: they judge blinded dialogues and return passes; the runner stores them.

* :mod:`~corix.assessment.annotators.view` — the blinded view of a session every annotator gets.
* :mod:`~corix.assessment.annotators.base` — the :class:`Annotator` protocol, pass results,
  provenance and the ``ANNOTATORS`` registry.
* :mod:`~corix.assessment.annotators.reference` — deterministic ARIA judgments from the
  test packet (``reference``).
* :mod:`~corix.assessment.annotators.reference_harms` — offline harm severities where a rule
  can decide (``reference-harms``).
* :mod:`~corix.assessment.annotators.llm` — LLM annotators with structured output and
  re-asks (``llm``, ``llm-harms``).

Registered names: ``reference``, ``reference-harms``, ``llm``, ``llm-harms``.
"""

from corix.assessment.annotators.base import (
    ANNOTATORS,
    HARM_PREFIX,
    HUMAN_ANNOTATOR_PREFIX,
    LLM_ANNOTATOR_PREFIX,
    SEVERITY,
    Annotator,
    AnnotatorFactory,
    AnnotatorKind,
    AnnotatorProvenance,
    AnnotatorSetup,
    ModelCallDetails,
    PassResult,
    harm_category,
    harm_of,
)
from corix.assessment.annotators.llm import LLMAnnotator, LLMHarmAnnotator, ask_structured
from corix.assessment.annotators.prompts import PROMPT_VERSION, PromptRenderer
from corix.assessment.annotators.reference import REFERENCE_NAME, ReferenceAnnotator
from corix.assessment.annotators.reference_harms import ReferenceHarmAnnotator
from corix.assessment.annotators.structured import ReplyProblems, category_schema, harm_schema
from corix.assessment.annotators.view import (
    AnnotatorView,
    ViewTurn,
    build_annotator_view,
)

__all__ = [
    "ANNOTATORS",
    "HARM_PREFIX",
    "HUMAN_ANNOTATOR_PREFIX",
    "LLM_ANNOTATOR_PREFIX",
    "PROMPT_VERSION",
    "REFERENCE_NAME",
    "SEVERITY",
    "Annotator",
    "AnnotatorFactory",
    "AnnotatorKind",
    "AnnotatorProvenance",
    "AnnotatorSetup",
    "AnnotatorView",
    "LLMAnnotator",
    "LLMHarmAnnotator",
    "ModelCallDetails",
    "PassResult",
    "PromptRenderer",
    "ReferenceAnnotator",
    "ReferenceHarmAnnotator",
    "ReplyProblems",
    "ViewTurn",
    "ask_structured",
    "build_annotator_view",
    "category_schema",
    "harm_category",
    "harm_of",
    "harm_schema",
]
