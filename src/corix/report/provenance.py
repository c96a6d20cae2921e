"""Who produced a run's labels and answers: annotators, guideline versions, respondents.

Read from each pass's stored provenance, so the report says which annotator, in which
version, under which guidelines, made the numbers it shows; and from the settings each
annotation job stored when it started (repeats, guidelines, endpoint), described in words
here for the report and ``corix runs show``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from corix.domain import AnnotationJobSettings
from corix.report.formatting import number, words
from corix.storage import Database, iter_pass_provenance


@dataclass(frozen=True)
class AnnotatorSummary:
    """Passes by one annotator under one version and one guideline version."""

    annotator: str
    kind: str
    version: str | None
    guideline_version: str | None
    model: str | None
    categories: tuple[str, ...]
    passes: int
    failed: int
    repeats: int
    """Most runs of one pass (1 when never repeated)."""


@dataclass
class _PassTally:
    categories: set[str] = field(default_factory=set)
    passes: int = 0
    failed: int = 0
    repeats: int = 1


def annotator_summaries(db: Database, run_ids: Sequence[str]) -> list[AnnotatorSummary]:
    """One row per annotator × version × guideline version × model, sorted."""
    tallies: defaultdict[tuple[str, str, str | None, str | None, str | None], _PassTally]
    tallies = defaultdict(_PassTally)
    for row in iter_pass_provenance(db, run_ids):
        key = (
            row.annotator,
            row.annotator_kind,
            _optional_text(row.provenance.get("version")),
            _optional_text(row.provenance.get("guideline_version")),
            _optional_text(row.provenance.get("model")),
        )
        tally = tallies[key]
        tally.categories.add(row.category)
        tally.passes += 1
        tally.failed += not row.ok
        tally.repeats = max(tally.repeats, row.repeat_no + 1)
    return [
        AnnotatorSummary(
            annotator=key[0],
            kind=key[1],
            version=key[2],
            guideline_version=key[3],
            model=key[4],
            categories=tuple(sorted(tally.categories)),
            passes=tally.passes,
            failed=tally.failed,
            repeats=tally.repeats,
        )
        for key, tally in sorted(tallies.items(), key=lambda item: tuple(map(str, item[0])))
    ]


def _optional_text(value: object) -> str | None:
    return None if value is None else str(value)


def repeats_text(settings: AnnotationJobSettings) -> str:
    """How often each item was asked: passes, repeats and the adaptive stopping rule."""
    passes = f"{settings.passes} pass{'es' if settings.passes != 1 else ''}"
    repeats = f"{settings.repeats} run{'s' if settings.repeats != 1 else ''} each"
    text = f"{passes}, {repeats}"
    if settings.adaptive:
        text += f" at most, adaptive (at least {settings.min_repeats}"
        if settings.max_change is not None:
            text += (
                f", stopping once the remaining runs change the answer with probability "
                f"at most {number(settings.max_change, 2)}, for the judge noise measured "
                f"(assumed {number(settings.judge_noise, 2)} until measured)"
            )
        if settings.max_flip_rate:
            text += f", or at a flip rate of {number(settings.max_flip_rate, 2)}"
        text += ")"
    text += f"; seed {settings.seed}"
    if settings.temperature is not None:
        text += f", temperature {settings.temperature:g}"
    if settings.endpoint is not None:
        text += f"; up to {settings.max_reasks} re-asks of a malformed reply"
    return text


def targets_text(settings: AnnotationJobSettings) -> str:
    """The categories asked and the harm packs judged, with their guideline versions."""
    parts = []
    if settings.categories:
        categories = ", ".join(words(category) for category in settings.categories)
        parts.append(f"schema {settings.schema_version}: {categories}")
    if settings.harm_pack_versions:
        harms = ", ".join(f"{h} {v}" for h, v in sorted(settings.harm_pack_versions.items()))
        parts.append(f"harms: {harms}")
    if settings.prompt_version is not None:
        parts.append(f"prompt {settings.prompt_version}")
    return "; ".join(parts)


def endpoint_text(settings: AnnotationJobSettings) -> str:
    """The model endpoint the job called and how it asked; no key, header or credential."""
    endpoint = settings.endpoint
    if endpoint is None:
        return "no model endpoint"
    where = endpoint.transport + (f" {endpoint.base_url}" if endpoint.base_url else "")
    parts = [f"{endpoint.model} via {where}", f"structured output {endpoint.structured_output}"]
    if endpoint.context_window is not None:
        parts.append(f"context window {endpoint.context_window}")
    if endpoint.max_tokens is not None:
        parts.append(f"max tokens {endpoint.max_tokens}")
    parts.append(f"timeout {endpoint.timeout_s:g} s")
    return "; ".join(parts)
