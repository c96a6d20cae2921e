"""What every automated annotator shares: its protocol, its result, its provenance, its registry.

Annotators *return* passes; the runner (:mod:`corix.assessment.annotation_run`) decides what to ask
and stores what comes back. A pass answers one *target*: an annotation-schema category
(``risk_assessment``…) or a harm, written ``harm:<pack id>`` with one answer, ``severity``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from corix.assessment.annotators.view import AnnotatorView
from corix.assessment.answers import Answer
from corix.assessment.harms import HarmPack
from corix.assessment.schema import AnnotationSchema
from corix.llm import LLMClient
from corix.registry import Registry

HARM_PREFIX = "harm:"
SEVERITY = "severity"
"""The one question of a harm pass."""


class AnnotatorKind(StrEnum):
    """Stored as ``annotator_kind``: who or what made a pass."""

    REFERENCE = "reference"
    LLM = "llm"
    HUMAN = "human"


HUMAN_ANNOTATOR_PREFIX = "user:"
"""A person's passes are stored under ``user:<username>``."""
LLM_ANNOTATOR_PREFIX = "llm:"
"""An LLM annotator's passes are stored under ``llm:<model>``."""


def harm_category(pack_id: str) -> str:
    """The category under which passes about harm ``pack_id`` are stored."""
    return f"{HARM_PREFIX}{pack_id}"


def harm_of(category: str) -> str | None:
    """The harm pack id of a ``harm:<id>`` category, or ``None`` for a schema category."""
    return category.removeprefix(HARM_PREFIX) if category.startswith(HARM_PREFIX) else None


class ContextCutRecord(BaseModel):
    """How a dialogue was cut to fit the judge's context window: the rule and its counts."""

    model_config = ConfigDict(frozen=True)

    rule: str
    context_window: int
    budget_tokens: int
    messages_cut: int
    chars_left_out: int


class ModelCallDetails(BaseModel):
    """How one pass's model calls went: stored with the pass, summed into the run's tally."""

    model_config = ConfigDict(frozen=True)

    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    structured_output: str | None = None
    """How JSON was asked for (json_schema, json_object or prompt), as the endpoint took it."""
    finish_reason: str | None = None
    context_cut: ContextCutRecord | None = None
    last_reply: str | None = None
    """The start of the last reply, kept when the pass failed."""
    cached_prompt_tokens: int | None = None
    """Of ``prompt_tokens``, those the endpoint reported taking from a kept prefix."""
    max_tokens: int | None = None
    """The reply length asked for last (sized from the answer schema, doubled once after
    a reply was cut)."""
    dropped_hidden: tuple[str, ...] = ()
    """Answers to follow-ups the pass's own answers hide, dropped (``question (turn i)``)."""


class AnnotatorProvenance(BaseModel):
    """What made a pass: stored with it, so a result can always be traced and reproduced."""

    model_config = ConfigDict(frozen=True)

    annotator: str
    version: str
    kind: AnnotatorKind
    guideline_version: str
    model: str | None = None
    endpoint: str | None = None
    seed: int | None = None
    details: ModelCallDetails | None = None
    """How the model was asked for this pass; ``None`` for rule-based annotators."""


class PassResult(BaseModel):
    """One pass: validated answers, or the reason there are none (``error``)."""

    model_config = ConfigDict(frozen=True)

    category: str
    answers: tuple[Answer, ...] = ()
    error: str | None = None
    provenance: AnnotatorProvenance

    @property
    def ok(self) -> bool:
        return self.error is None


class Annotator(Protocol):
    """Judges blinded dialogues (:class:`AnnotatorView`) on the targets it supports.

    ``name`` is what passes are stored under: one name per judge (``reference``,
    ``llm:<model>``), so that passes by different judges are never mixed up.
    ``deterministic`` annotators give the same pass every time, so repeating them is
    pointless. ``annotate`` returns ``None`` when the target does not apply to this
    dialogue (e.g. guideline leakage without a known system prompt); failures are
    returned as a failed :class:`PassResult`, never raised.
    """

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> AnnotatorKind: ...

    @property
    def deterministic(self) -> bool: ...

    def targets(self) -> tuple[str, ...]: ...

    async def annotate(
        self, view: AnnotatorView, target: str, *, seed: int
    ) -> PassResult | None: ...


@dataclass(frozen=True)
class AnnotatorSetup:
    """Everything a factory may need to build an annotator; each takes what it uses."""

    schema: AnnotationSchema
    harm_packs: Mapping[str, HarmPack]
    client: LLMClient | None = None
    max_reasks: int = 2
    temperature: float | None = None
    """Sampling temperature for model calls (``None``: the endpoint's default)."""


AnnotatorFactory = Callable[[AnnotatorSetup], Annotator]

# corix.extension_points lists every registry.
ANNOTATORS: Registry[AnnotatorFactory] = Registry("annotator", builtins="corix.assessment.plugin")
"""Annotator factories by the name given to ``corix annotate --annotator``."""
