"""Harm packs: versioned guidelines, a severity scale and a defect rule for one harm.

Following the automated RAI-harm measurement design (Magooda et al., arXiv 2310.17750),
an annotator (an LLM or a person) reads a harm's guidelines — its definition, worked
examples and the definition of a defect — and returns a severity on the pack's scale.
The defect rule turns severities into the yes/no outcome that defect rates count.

Packs are YAML files; the built-in ones live in ``corix/assessment/harm_packs/``.
"""

from __future__ import annotations

from enum import StrEnum
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from corix.assessment.schema import Identifier
from corix.config import load_yaml_model, parse_yaml_model
from corix.errors import ConfigError, unknown_name

BUILTIN_PACK_DIRECTORY = "harm_packs"


class _PackModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HarmExample(_PackModel):
    """A worked example: a short sample, the severity it deserves and why."""

    sample: str
    severity: int
    explanation: str


class Guidelines(_PackModel):
    definition: str
    examples: tuple[HarmExample, ...] = Field(min_length=1)
    defect_definition: str


class SeverityScale(_PackModel):
    """Integer severities from ``min`` to ``max``, each with a label saying what it means."""

    min: int
    max: int
    labels: dict[int, str]

    @model_validator(mode="after")
    def _check_labels(self) -> Self:
        if self.min >= self.max:
            raise ValueError(f"scale 'min' ({self.min}) must be below 'max' ({self.max})")
        expected = set(range(self.min, self.max + 1))
        missing = sorted(expected - self.labels.keys())
        extra = sorted(self.labels.keys() - expected)
        if missing or extra:
            raise ValueError(
                f"labels must cover every point from {self.min} to {self.max} exactly "
                f"(missing: {missing or 'none'}, outside the scale: {extra or 'none'})"
            )
        return self

    def contains(self, severity: float) -> bool:
        return self.min <= severity <= self.max


class DefectDirection(StrEnum):
    """Whether severities at least or at most the threshold count as defects."""

    AT_LEAST = "at_least"
    AT_MOST = "at_most"


class DefectRule(_PackModel):
    threshold: int
    direction: DefectDirection


class SubHarm(_PackModel):
    """A named part of a harm (e.g. jailbreak → guideline leakage) with its own definition."""

    id: Identifier
    title: str
    definition: str


class HarmPack(_PackModel):
    id: Identifier
    version: str
    title: str
    guidelines: Guidelines
    scale: SeverityScale
    defect: DefectRule
    sub_harms: tuple[SubHarm, ...] = ()

    @model_validator(mode="after")
    def _check_against_scale(self) -> Self:
        if not self.scale.contains(self.defect.threshold):
            raise ValueError(
                f"defect threshold {self.defect.threshold} is outside the scale "
                f"{self.scale.min}–{self.scale.max}"
            )
        for example in self.guidelines.examples:
            if not self.scale.contains(example.severity):
                raise ValueError(
                    f"an example has severity {example.severity}, outside the scale "
                    f"{self.scale.min}–{self.scale.max}"
                )
        return self

    def is_defect(self, severity: float) -> bool:
        """Whether ``severity`` passes the defect threshold; raise ``ValueError`` off the scale."""
        if not self.scale.contains(severity):
            raise ValueError(
                f"severity {severity:g} is outside the '{self.id}' scale "
                f"{self.scale.min}–{self.scale.max}"
            )
        if self.defect.direction is DefectDirection.AT_LEAST:
            return severity >= self.defect.threshold
        return severity <= self.defect.threshold


def load_harm_pack_file(path: Path) -> HarmPack:
    """Load a harm pack from a YAML file; errors name the file, the field and the line."""
    return load_yaml_model(path, HarmPack)


def _builtin_directory() -> Traversable:
    return resources.files("corix.assessment").joinpath(BUILTIN_PACK_DIRECTORY)


def builtin_harm_pack_names() -> list[str]:
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in _builtin_directory().iterdir()
        if entry.name.endswith(".yaml")
    )


def load_harm_pack(name: str) -> HarmPack:
    """Load a built-in harm pack by name (an unknown name gets a "did you mean")."""
    known = builtin_harm_pack_names()
    if name not in known:
        raise unknown_name("harm pack", name, known)
    text = _builtin_directory().joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    source = f"corix.assessment/{BUILTIN_PACK_DIRECTORY}/{name}.yaml"
    pack = parse_yaml_model(text, HarmPack, source=source)
    if pack.id != name:
        raise ConfigError(
            f"pack id '{pack.id}' differs from its file name", path=source, field="id"
        )
    return pack


def builtin_harm_packs() -> dict[str, HarmPack]:
    """Every built-in harm pack, by id."""
    return {name: load_harm_pack(name) for name in builtin_harm_pack_names()}
