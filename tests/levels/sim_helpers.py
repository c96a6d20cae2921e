"""Plans and queries shared by the simulated-user tests."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from corix.domain import Level, SessionRecord
from corix.execution.plan import ApplicationEntry, LevelSettings, Plan
from corix.storage import Database, iter_sessions
from corix.storage.orm import QuestionnaireResponseRow, SessionRow

GUARDED = ApplicationEntry(name="guarded", spec="demo:guarded")
UNGUARDED = ApplicationEntry(name="unguarded", spec="demo:unguarded")


def plan_for(
    *apps: ApplicationEntry,
    level: Level = Level.RED_TEAMING,
    scenarios: list[str] | None = None,
    seed: int = 11,
    **settings: Any,
) -> Plan:
    return Plan(
        name="simulated",
        seed=seed,
        applications=list(apps) or [GUARDED],
        scenarios=scenarios or ["tv_spoilers"],
        levels={level: LevelSettings(**settings)},
        concurrency=8,
    )


def sessions(db: Database, run_id: str) -> list[SessionRecord]:
    return list(iter_sessions(db, run_id))


def answers(db: Database, session_id: str) -> list[QuestionnaireResponseRow]:
    with db.session() as s:
        query = select(QuestionnaireResponseRow).where(
            QuestionnaireResponseRow.session_id == session_id
        )
        return list(s.scalars(query.order_by(QuestionnaireResponseRow.item_id)))


def work_key(session: SessionRecord, db: Database) -> str:
    with db.session() as s:
        row = s.get(SessionRow, session.id)
        assert row is not None and row.work_key is not None
        return row.work_key
