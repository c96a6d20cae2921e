"""Who produced a run's labels and answers: annotators, guideline versions, respondents.

Read from each pass's stored provenance, so the report says which annotator, in which
version, under which guidelines, made the numbers it shows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from corix.storage import Database
from corix.storage.run_provenance import iter_pass_provenance


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
