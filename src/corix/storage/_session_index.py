"""The finished sessions of runs as an index: counts per session, turns not loaded."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import case, func, select

from corix.domain import Provenance
from corix.storage.database import Database
from corix.storage.orm import ApplicationRow, SessionRow, TurnRow

__all__ = [
    "IndexedSession",
    "SessionFacts",
    "iter_session_facts",
    "session_index",
]


@dataclass(frozen=True, slots=True)
class IndexedSession:
    id: str
    application: str
    scenario: str
    level: str
    source: str
    end_reason: str | None
    n_turns: int
    n_failed_turns: int
    n_cut_turns: int
    """Replies cut at the token limit (``finish_reason: length``)."""


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """How a complete session was made and how it ended, without its turns."""

    id: str
    application: str
    level: str
    scenario: str
    provenance: Provenance
    strategy: str | None
    end_reason: str | None


def iter_session_facts(db: Database, run_id: str, levels: Sequence[str]) -> Iterator[SessionFacts]:
    """The complete sessions of ``run_id`` at ``levels``, by id, streamed."""
    query = (
        select(
            SessionRow.id,
            ApplicationRow.name,
            SessionRow.level,
            SessionRow.scenario,
            SessionRow.provenance,
            SessionRow.strategy,
            SessionRow.end_reason,
        )
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .where(
            SessionRow.run_id == run_id,
            SessionRow.status == "complete",
            SessionRow.level.in_(list(levels)),
        )
        .order_by(SessionRow.id)
        .execution_options(yield_per=1000)
    )
    with db.session() as s:
        for id_, application, level, scenario, provenance, strategy, end_reason in s.execute(query):
            yield SessionFacts(
                id_,
                application,
                level,
                scenario,
                Provenance.model_validate(provenance),
                strategy,
                end_reason,
            )


def session_index(db: Database, run_ids: Sequence[str]) -> list[IndexedSession]:
    """One entry per complete session of ``run_ids``, by application, level, scenario, id."""
    failed = case((TurnRow.error.is_not(None), 1), else_=0)
    cut = case((TurnRow.meta["finish_reason"].as_string() == "length", 1), else_=0)
    columns = (
        SessionRow.id,
        ApplicationRow.name,
        SessionRow.scenario,
        SessionRow.level,
        SessionRow.source,
        SessionRow.end_reason,
    )
    query = (
        select(
            *columns,
            func.count(TurnRow.id),
            func.coalesce(func.sum(failed), 0),
            func.coalesce(func.sum(cut), 0),
        )
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .outerjoin(TurnRow, TurnRow.session_id == SessionRow.id)
        .where(SessionRow.run_id.in_(run_ids), SessionRow.status == "complete")
        .group_by(*columns)
        .order_by(ApplicationRow.name, SessionRow.level, SessionRow.scenario, SessionRow.id)
    )
    with db.session() as s:
        return [
            IndexedSession(
                id=row[0],
                application=row[1],
                scenario=row[2],
                level=row[3],
                source=row[4],
                end_reason=row[5],
                n_turns=int(row[6]),
                n_failed_turns=int(row[7]),
                n_cut_turns=int(row[8]),
            )
            for row in s.execute(query)
        ]
