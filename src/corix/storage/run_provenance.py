"""What a report says made a run's labels and answers, counted in the database.

Pass provenance streams one row at a time; respondents and stability are counted by the
database. Only finished sessions count.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import func, select

from corix.domain import JsonObject
from corix.storage.database import Database
from corix.storage.orm import (
    AnnotationConsensusRow,
    AnnotationPassRow,
    QuestionnaireResponseRow,
    SessionRow,
)

__all__ = [
    "PassProvenance",
    "RespondentSummary",
    "StabilitySummary",
    "iter_pass_provenance",
    "respondent_summaries",
    "stability_summaries",
]

_STREAM_BATCH = 5000


@dataclass(frozen=True, slots=True)
class PassProvenance:
    """One stored pass: who made it, on what, whether it failed, and its provenance."""

    annotator: str
    annotator_kind: str
    category: str
    ok: bool
    repeat_no: int
    provenance: JsonObject


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


def iter_pass_provenance(db: Database, run_ids: Sequence[str]) -> Iterator[PassProvenance]:
    """Every pass on the complete sessions of ``run_ids``."""
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
    with db.session() as s:
        for row in s.execute(query).yield_per(_STREAM_BATCH):
            yield PassProvenance(
                row.annotator,
                row.annotator_kind,
                row.category,
                row.status == "ok",
                row.repeat_no,
                row.provenance or {},
            )


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
