"""Who produced a run's labels and answers: annotators, guideline versions, respondents.

Read from each pass's stored provenance, so the report says which annotator, in which
version, under which guidelines, made the numbers it shows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import func, select

from corix.storage import Database
from corix.storage.orm import (
    AnnotationConsensusRow,
    AnnotationPassRow,
    QuestionnaireResponseRow,
    SessionRow,
)

_STREAM_BATCH = 5000


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


@dataclass(frozen=True)
class RespondentSummary:
    """Questionnaire answers by simulated testers or by people."""

    simulated: bool
    respondents: int
    sessions: int
    answers: int


@dataclass(frozen=True)
class StabilitySummary:
    """How stable an annotator's repeated runs were (from the stored consensus)."""

    annotator: str
    items: int
    repeated_items: int
    mean_flip_rate: float | None
    unanimous: int


@dataclass
class _PassTally:
    categories: set[str] = field(default_factory=set)
    passes: int = 0
    failed: int = 0
    repeats: int = 1


def annotator_summaries(db: Database, run_ids: Sequence[str]) -> list[AnnotatorSummary]:
    """One row per annotator × version × guideline version × model, sorted."""
    query = (
        select(
            AnnotationPassRow.annotator,
            AnnotationPassRow.annotator_kind,
            AnnotationPassRow.category,
            AnnotationPassRow.status,
            AnnotationPassRow.repeat_no,
            AnnotationPassRow.provenance,
        )
        .join(SessionRow, SessionRow.id == AnnotationPassRow.session_id)
        .where(SessionRow.run_id.in_(run_ids), SessionRow.status == "complete")
    )
    tallies: defaultdict[tuple[str, str, str | None, str | None, str | None], _PassTally]
    tallies = defaultdict(_PassTally)
    with db.session() as s:
        for row in s.execute(query).yield_per(_STREAM_BATCH):
            provenance = row.provenance or {}
            key = (
                row.annotator,
                row.annotator_kind,
                _optional_text(provenance.get("version")),
                _optional_text(provenance.get("guideline_version")),
                _optional_text(provenance.get("model")),
            )
            tally = tallies[key]
            tally.categories.add(row.category)
            tally.passes += 1
            tally.failed += row.status != "ok"
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


def respondent_summaries(db: Database, run_ids: Sequence[str]) -> list[RespondentSummary]:
    """Questionnaire answers split into simulated testers and people."""
    query = (
        select(
            QuestionnaireResponseRow.simulated,
            func.count(func.distinct(QuestionnaireResponseRow.respondent)),
            func.count(func.distinct(QuestionnaireResponseRow.session_id)),
            func.count(),
        )
        .join(SessionRow, SessionRow.id == QuestionnaireResponseRow.session_id)
        .where(SessionRow.run_id.in_(run_ids), SessionRow.status == "complete")
        .group_by(QuestionnaireResponseRow.simulated)
        .order_by(QuestionnaireResponseRow.simulated)
    )
    with db.session() as s:
        return [
            RespondentSummary(bool(simulated), respondents, sessions, answers)
            for simulated, respondents, sessions, answers in s.execute(query)
        ]


def stability_summaries(db: Database, run_ids: Sequence[str]) -> list[StabilitySummary]:
    """Per annotator: settled items, how many were repeated, mean flip rate over those."""
    repeated = AnnotationConsensusRow.n_runs > 1
    query = (
        select(
            AnnotationConsensusRow.annotator,
            func.count(),
            func.count().filter(repeated),
            func.avg(AnnotationConsensusRow.flip_rate).filter(repeated),
            func.count().filter(repeated, AnnotationConsensusRow.flip_rate == 0),
        )
        .join(SessionRow, SessionRow.id == AnnotationConsensusRow.session_id)
        .where(SessionRow.run_id.in_(run_ids), SessionRow.status == "complete")
        .group_by(AnnotationConsensusRow.annotator)
        .order_by(AnnotationConsensusRow.annotator)
    )
    with db.session() as s:
        return [
            StabilitySummary(
                annotator=annotator,
                items=items,
                repeated_items=repeated_items,
                mean_flip_rate=None if mean_flip is None else float(mean_flip),
                unanimous=unanimous,
            )
            for annotator, items, repeated_items, mean_flip, unanimous in s.execute(query)
        ]


def _optional_text(value: object) -> str | None:
    return None if value is None else str(value)
