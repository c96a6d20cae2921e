"""A run's row, written here alone (its lease aside: ``run_lease``): its start (a run of
corix's, one recorded elsewhere, a web series' run of people), its totals, its end,
cancelling and deleting it.

Totals are always counted from the stored rows of the whole run, never from one
invocation's memory, so a resumed run reports the same numbers as an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import case, delete, func, select, update

from corix.domain import EndReason, RunPlan, RunSummary, TurnRecord, read_run_plan, run_plan_json
from corix.scenarios import PackRecord
from corix.storage._run_packs import add_run_packs
from corix.storage.clock import utcnow
from corix.storage.database import Database
from corix.storage.orm import ApplicationRow, RunRow, SessionRow, TurnRow
from corix.storage.run_lease import LeaseFence, RunHeld, check_fence, live_holder
from corix.storage.sessions import SessionEnd, store_session
from corix.storage.store_records import NewSession, RunRecord, RunTotals
from corix.storage.transactions import NotFoundError, Transaction

__all__ = [
    "FAILED_END_REASONS",
    "NewRun",
    "RecordedSession",
    "create_run",
    "deletable_run",
    "delete_run",
    "finish_run",
    "get_run",
    "list_runs",
    "run_applications",
    "run_totals",
    "set_run_status",
    "set_run_status_if",
    "store_recorded_run",
]

FAILED_END_REASONS = frozenset(
    {
        EndReason.APP_ERROR.value,
        EndReason.SIMULATOR_ERROR.value,
        EndReason.STORAGE_ERROR.value,
        EndReason.SOURCE_ERROR.value,
    }
)
"""End reasons that make a session count as failed in a run's totals and status."""


@dataclass(frozen=True, slots=True)
class NewRun:
    """A run as it is stored first, with the scenario packs it uses."""

    id: str
    name: str
    plan: RunPlan
    seed: int = 0
    status: str = "running"
    evaluation_id: str | None = None
    """The web series the run belongs to (a series' run of people)."""
    finished_at: datetime | None = None
    packs: tuple[PackRecord, ...] = ()


def insert_run(tx: Transaction, new: NewRun) -> None:
    """Store ``new`` and its packs."""
    tx.add(
        RunRow(
            id=new.id,
            name=new.name,
            plan=run_plan_json(new.plan),
            seed=new.seed,
            status=new.status,
            evaluation_id=new.evaluation_id,
            finished_at=new.finished_at,
        )
    )
    tx.flush()
    add_run_packs(tx, new.id, new.packs)


def put_in_series(tx: Transaction, run_name: str, evaluation_id: str) -> None:
    """Put the runs named ``run_name`` in the web series ``evaluation_id``."""
    tx.execute(
        update(RunRow)
        .where(RunRow.name == run_name)
        .values(evaluation_id=evaluation_id)
        .execution_options(synchronize_session=False)
    )


@dataclass(frozen=True, slots=True)
class RecordedSession:
    """A whole session recorded elsewhere: its start, its turns and its end."""

    session: NewSession
    turns: tuple[TurnRecord, ...]
    end_reason: EndReason | None
    end_detail: str | None = None
    """Why it ended so, in the words of where it was recorded (an Inspect sample's error)."""
    ended_at: datetime = field(default_factory=utcnow)


def store_recorded_run(db: Database, new: NewRun, sessions: Sequence[RecordedSession]) -> None:
    """A run recorded elsewhere with all its sessions and its summary (counted from the
    stored rows, as a run's end counts them), in one transaction: a failure leaves no run,
    no session and no turn behind."""
    with db.session() as tx:
        insert_run(tx, new)
        for recorded in sessions:
            end = SessionEnd(
                recorded.session.id,
                recorded.end_reason,
                recorded.end_detail,
                ended_at=recorded.ended_at,
            )
            store_session(tx, recorded.session, recorded.turns, end)
        tx.flush()
        summary = RunSummary(**dataclasses.asdict(_totals(tx, new.id))).model_dump(mode="json")
        tx.execute(update(RunRow).where(RunRow.id == new.id).values(summary=summary))


def run_totals(db: Database, run_id: str) -> RunTotals:
    """Sessions, failed sessions, turns, error turns and application tokens of the run."""
    with db.session() as s:
        return _totals(s, run_id)


def _totals(s: Transaction, run_id: str) -> RunTotals:
    sessions, failed = s.execute(
        select(
            func.count(),
            func.coalesce(
                func.sum(case((SessionRow.end_reason.in_(sorted(FAILED_END_REASONS)), 1), else_=0)),
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
    return RunTotals(
        sessions=int(sessions),
        failed_sessions=int(failed),
        turns=int(turns),
        error_turns=int(error_turns),
        prompt_tokens=int(prompt),
        completion_tokens=int(completion),
    )


def finish_run(
    db: Database,
    run_id: str,
    status: str,
    summary: RunSummary,
    *,
    fence: LeaseFence | None = None,
) -> None:
    """Store the end of an invocation; a run cancelled meanwhile stays cancelled. Under
    ``fence``, only the lease's current holder may: else :class:`LeaseLost`, nothing stored."""
    with db.session() as s:
        row = s.get(RunRow, run_id)
        if row is None:
            raise NotFoundError(f"no run '{run_id}'")
        if row.status != "cancelled":
            row.status = status
        row.summary = summary.model_dump(mode="json")
        row.finished_at = utcnow()
        if fence is not None:
            s.flush()
            check_fence(s, fence)


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


def deletable_run(db: Database, run_id: str) -> RunRecord:
    """The run, refused (:class:`RunHeld`) when a live process holds it: what to check
    before asking a person to confirm :func:`delete_run`, which checks again."""
    run = get_run(db, run_id)
    _refuse_held(run_id, run.lease_holder, run.lease_heartbeat_at)
    return run


def delete_run(db: Database, run_id: str) -> int:
    """Delete a run with its sessions, turns, answers and annotations; returns the sessions.

    A run a live process holds is refused (:class:`RunHeld`), checked in the transaction
    that deletes: a resume that took the run while a person was asked to confirm keeps it.
    """
    with db.session() as s:
        row = s.get(RunRow, run_id, with_for_update=True)
        if row is None:
            raise NotFoundError(f"no run '{run_id}'")
        _refuse_held(run_id, row.lease_holder, row.lease_heartbeat_at)
        sessions = s.scalar(
            select(func.count()).select_from(SessionRow).where(SessionRow.run_id == run_id)
        )
        # Foreign keys cascade from the run to its sessions and from them to the rest.
        s.execute(delete(RunRow).where(RunRow.id == run_id))
        return int(sessions or 0)


def _refuse_held(run_id: str, holder: str | None, heartbeat_at: datetime | None) -> None:
    """Deleting a run a live process holds would pull its records from under it."""
    if (live := live_holder(holder, heartbeat_at)) is not None:
        raise RunHeld(run_id, live)


def create_run(
    db: Database,
    run_id: str,
    *,
    name: str,
    plan: RunPlan,
    seed: int,
    packs: Iterable[PackRecord] = (),
) -> None:
    """Store a new run with the scenario packs it uses, in one transaction."""
    with db.session() as s:
        insert_run(s, NewRun(run_id, name, plan, seed=seed, packs=tuple(packs)))


def get_run(db: Database, run_id: str) -> RunRecord:
    with db.session() as s:
        row = s.get(RunRow, run_id)
        if row is None:
            known = list(s.scalars(select(RunRow.id).order_by(RunRow.created_at)))
            raise NotFoundError(
                f"no run '{run_id}'. Known runs: {', '.join(known[-10:]) or 'none'}"
            )
        return _run_record(row)


def list_runs(db: Database) -> list[RunRecord]:
    with db.session() as s:
        return [_run_record(row) for row in s.scalars(select(RunRow).order_by(RunRow.created_at))]


def run_applications(db: Database, run_id: str) -> set[str]:
    """The names of the applications the run's sessions talked to."""
    query = (
        select(ApplicationRow.name)
        .join(SessionRow, SessionRow.application_id == ApplicationRow.id)
        .where(SessionRow.run_id == run_id)
        .distinct()
    )
    with db.session() as s:
        return set(s.scalars(query))


def set_run_status(
    db: Database, run_id: str, status: str, *, summary: RunSummary | None = None
) -> None:
    with db.session() as s:
        row = s.get(RunRow, run_id)
        if row is None:
            raise NotFoundError(f"no run '{run_id}'")
        row.status = status
        if summary is not None:
            row.summary = summary.model_dump(mode="json")
        row.finished_at = utcnow() if status == "complete" else None


def _run_record(row: RunRow) -> RunRecord:
    return RunRecord(
        id=row.id,
        name=row.name,
        evaluation_id=row.evaluation_id,
        plan=read_run_plan(row.plan),
        seed=row.seed,
        status=row.status,
        summary=RunSummary.model_validate(row.summary),
        created_at=row.created_at,
        finished_at=row.finished_at,
        lease_holder=row.lease_holder,
        lease_heartbeat_at=row.lease_heartbeat_at,
    )
