"""A run's lifecycle in the database: its totals, its end, cancelling and deleting it.

Totals are always counted from the stored rows of the whole run, never from one
invocation's memory, so a resumed run reports the same numbers as an uninterrupted one.
"""

from __future__ import annotations

from sqlalchemy import case, delete, func, select

from corix.domain import EndReason, RunSummary
from corix.storage.clock import utcnow
from corix.storage.database import Database
from corix.storage.orm import RunRow, SessionRow, TurnRow
from corix.storage.repository import NotFoundError

__all__ = ["FAILED_END_REASONS", "delete_run", "finish_run", "run_totals", "set_run_status_if"]

FAILED_END_REASONS = frozenset(
    {EndReason.APP_ERROR.value, EndReason.SIMULATOR_ERROR.value, EndReason.STORAGE_ERROR.value}
)
"""End reasons that make a session count as failed in a run's totals and status."""


def run_totals(db: Database, run_id: str) -> dict[str, int]:
    """Sessions, failed sessions, turns, error turns and application tokens of the run."""
    with db.session() as s:
        sessions, failed = s.execute(
            select(
                func.count(),
                func.coalesce(
                    func.sum(
                        case((SessionRow.end_reason.in_(sorted(FAILED_END_REASONS)), 1), else_=0)
                    ),
                    0,
                ),
            ).where(SessionRow.run_id == run_id)
        ).one()
        turns, error_turns, prompt, completion = s.execute(
            select(
                func.count(TurnRow.id),
                func.count(TurnRow.error),
                func.coalesce(func.sum(TurnRow.prompt_tokens), 0),
                func.coalesce(func.sum(TurnRow.completion_tokens), 0),
            )
            .join(SessionRow, SessionRow.id == TurnRow.session_id)
            .where(SessionRow.run_id == run_id)
        ).one()
    return {
        "sessions": int(sessions),
        "failed_sessions": int(failed),
        "turns": int(turns),
        "error_turns": int(error_turns),
        "prompt_tokens": int(prompt),
        "completion_tokens": int(completion),
    }


def finish_run(db: Database, run_id: str, status: str, summary: RunSummary) -> None:
    """Store the end of an invocation; a run cancelled meanwhile stays cancelled."""
    with db.session() as s:
        row = s.get(RunRow, run_id)
        if row is None:
            raise NotFoundError(f"no run '{run_id}'")
        if row.status != "cancelled":
            row.status = status
        row.summary = summary.model_dump(mode="json")
        row.finished_at = utcnow()


def set_run_status_if(db: Database, run_id: str, status: str, *, allowed: set[str]) -> str:
    """Set ``status`` when the run's current status is in ``allowed``; return the old one."""
    with db.session() as s:
        row = s.get(RunRow, run_id, with_for_update=True)
        if row is None:
            raise NotFoundError(f"no run '{run_id}'")
        previous = row.status
        if previous in allowed:
            row.status = status
            row.finished_at = utcnow()
        return previous


def delete_run(db: Database, run_id: str) -> int:
    """Delete a run with its sessions, turns, answers and annotations; returns the sessions."""
    with db.session() as s:
        if s.get(RunRow, run_id) is None:
            raise NotFoundError(f"no run '{run_id}'")
        sessions = s.scalar(
            select(func.count()).select_from(SessionRow).where(SessionRow.run_id == run_id)
        )
        # Foreign keys cascade from the run to its sessions and from them to the rest.
        s.execute(delete(RunRow).where(RunRow.id == run_id))
        return int(sessions or 0)
