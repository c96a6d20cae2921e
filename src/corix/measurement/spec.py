"""The measurement specification: what a number is made of, stored and printed with it.

A number in corix is a function of the stored record *and* a specification: which
annotators count, how an annotator's repeats settle, how several annotators of one
source combine, whether senior resolutions replace the passes they resolve, the unit,
the trees (with a hash of each file), the interval settings and corix's version. The
specification is data: a YAML file (``--spec FILE``) or flags, validated on load with
errors that name the file, the field and the line.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from corix import __version__
from corix.assessment import DEFAULT_RULE, SETTLING_RULES
from corix.config import load_yaml_model
from corix.errors import ConfigError, closest_name

AnnotatorKindName = Literal["human", "llm", "reference"]
GroupAnnotatorsBy = Literal["source", "annotator", "all"]

__all__ = [
    "AnnotatorSelector",
    "MeasurementSpec",
    "TreeRef",
    "load_spec",
]


class _SpecModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AnnotatorSelector(_SpecModel):
    """Annotators that count: every field given must match (name, kind, guideline version)."""

    name: str | None = None
    kind: AnnotatorKindName | None = None
    guideline_version: str | None = None

    def matches(self, name: str, kind: str, guideline_version: str | None) -> bool:
        return (
            (self.name is None or self.name == name)
            and (self.kind is None or self.kind == kind)
            and (self.guideline_version is None or self.guideline_version == guideline_version)
        )


class TreeRef(_SpecModel):
    """A CoRIx tree by name or path, and the SHA-256 of the file that was scored."""

    tree: str
    sha256: str


class MeasurementSpec(_SpecModel):
    """How the stored record becomes numbers (see the module docstring).

    * ``annotators`` — selectors; an annotator counts when any selector matches it
      (empty: every annotator).
    * ``settling`` — the rule that settles one annotator's repeats of one item.
    * ``group_annotators_by`` — ``source`` (default: human, LLM and reference rules side by
      side, never pooled), ``annotator`` (one group per annotator), or ``all`` (pooled,
      on request only).
    * ``combine`` — several annotators of one group on one dialogue: ``keep`` their labels
      (the dialogue's value is their mean; intervals resample annotators too) or
      ``settle`` them into one label with the settling rule.
    * ``use_resolutions`` — a senior's resolution replaces the human values it resolves.
    * ``harms`` — the harms to report (empty: every harm with labels).
    """

    annotators: tuple[AnnotatorSelector, ...] = ()
    settling: str = DEFAULT_RULE
    group_annotators_by: GroupAnnotatorsBy = "source"
    combine: Literal["keep", "settle"] = "keep"
    use_resolutions: bool = True
    harms: tuple[str, ...] = ()
    unit: Literal["dialogue"] = "dialogue"
    trees: tuple[str, ...] = ("aria_pilot", "ai_rmf")
    confidence: float = Field(default=0.95, gt=0, lt=1)
    bootstrap: int = Field(default=1000, ge=0)
    seed: int = 0

    @field_validator("settling")
    @classmethod
    def _known_rule(cls, name: str) -> str:
        if name not in SETTLING_RULES:
            raise ValueError(SETTLING_RULES.unknown_message(name))
        return name

    def selects(self, name: str, kind: str, guideline_version: str | None) -> bool:
        return not self.annotators or any(
            selector.matches(name, kind, guideline_version) for selector in self.annotators
        )


class ResolvedSpec(_SpecModel):
    """A specification as applied: with the scored trees' hashes and corix's version."""

    spec: MeasurementSpec
    trees: tuple[TreeRef, ...]
    corix_version: str = __version__
    source: str | None = None
    """The file the specification was read from (``None``: defaults and flags)."""

    @property
    def digest(self) -> str:
        """A short hash of everything that decides the numbers (not the source file name)."""
        payload = self.model_dump(mode="json", exclude={"source"})
        text = json.dumps(payload, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def headline(self, name: Callable[[str], str] = str) -> str:
        """One line that says what the numbers below are made of; ``name`` words an
        annotator's stored name for readers (the JSON and exports keep the stored name)."""
        spec = self.spec
        who = ", ".join(_selector_text(s, name) for s in spec.annotators) or "every annotator"
        return (
            f"measurement {self.digest}: {who}; repeats settled by {spec.settling}; "
            f"annotators grouped by {spec.group_annotators_by}, {spec.combine} within a group; "
            f"resolutions {'used' if spec.use_resolutions else 'ignored'}; unit {spec.unit}; "
            f"{round(spec.confidence * 100)}% intervals, seed {spec.seed}; "
            f"corix {self.corix_version}"
        )


def _selector_text(selector: AnnotatorSelector, name: Callable[[str], str]) -> str:
    parts = [
        f"{field}={name(value) if field == 'name' else value}"
        for field, value in selector.model_dump().items()
        if value is not None
    ]
    return " ".join(parts)


def load_spec(path: Path) -> MeasurementSpec:
    """Read a specification file; errors name the file, the field and the line."""
    return load_yaml_model(path, MeasurementSpec)


def unknown_selector_error(
    spec: MeasurementSpec, index: int, known: list[str], source: str | None
) -> ConfigError:
    """The error for ``annotators[index]``, which matches no annotator of the record."""
    selector = spec.annotators[index]
    line = _line_of(source, selector.name or selector.guideline_version or selector.kind or "")
    close = closest_name(selector.name, known) if selector.name else None
    hint = f" Did you mean '{close}'?" if close else ""
    return ConfigError(
        f"annotators.{index}: no annotator in the record matches {_selector_text(selector, str)}."
        f"{hint} Annotators with labels: {', '.join(known) or 'none'}.",
        path=source or "measurement specification",
        line=line,
    )


def _line_of(source: str | None, needle: str) -> int | None:
    """The first line of ``source`` that mentions ``needle`` (the field's line in the file)."""
    if source is None or not needle:
        return None
    try:
        lines = Path(source).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    pattern = re.compile(rf"\b{re.escape(needle)}\b")
    return next((number for number, line in enumerate(lines, 1) if pattern.search(line)), None)
