"""Sessions and turns: the one write path every source goes through.

A run's :class:`~corix.storage.RecordWriter` (and through it a Ray worker's collected
records), the web (a tester's session, its turns, answers and end) and an import all write
a session, its turns, its questionnaire answers and its end with these functions, in a
unit of work they open (:func:`~corix.storage.transaction`). So whoever made a turn, its
texts cross the storable-text boundary here, the replacement is noted in its meta, and its
latency and tokens are stored the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, case, delete, func, insert, select, update
from sqlalchemy.orm import selectinload

from corix.domain import (
    EndReason,
    JsonObject,
    Level,
    Message,
    ModelUsage,
    Provenance,
    SessionRecord,
    SessionSource,
    SessionStatus,
    TurnRecord,
)
from corix.storage.clock import as_utc, utcnow
from corix.storage.database import Database, in_chunks, scalar_chunks
from corix.storage.orm import QuestionnaireResponseRow, SessionRow, TurnRow
from corix.storage.store_records import NewQuestionnaireAnswer, NewSession
from corix.storage.text import Columns, marked, storable_parameters
from corix.storage.transactions import NotFoundError, Transaction

__all__ = [
    "NewTurn",
    "SessionEnd",
    "SessionState",
    "add_questionnaire_answers",
    "add_turns",
    "completed_work_keys",
    "count_complete_sessions",
    "count_completed_work",
    "discard_incomplete_sessions",
    "finish_sessions",
    "iter_sessions",
    "load_session",
    "session_states",
    "start_sessions",
    "store_session",
]


@dataclass(frozen=True, slots=True)
class NewTurn:
    """A turn of a stored session, as it is written."""

    session_id: str
    turn: TurnRecord


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """How a session ended; writing it marks the session complete."""

    session_id: str
    end_reason: EndReason | None
    end_detail: str | None = None
    first_success_turn: int | None = None
    ended_at: datetime = field(default_factory=utcnow)
    simulator: ModelUsage | None = None
    """The simulated user's model calls (``None``: keep what its start stored: none for a
    script or a person, not recorded otherwise)."""


# Writes go to the tables (Core executemany), not through the ORM's bulk path, which
# inspects every row again for the mapper: the rows here are complete already.
_SESSIONS = cast(Table, SessionRow.__table__)
_TURNS = cast(Table, TurnRow.__table__)
# Built once: a run's writer executes them for every batch, and a statement keeps the
# cache key it computed, which a new one computes again.
_START = insert(_SESSIONS)
_ADD_TURNS = insert(_TURNS)
_END = update(_SESSIONS).where(_SESSIONS.c.id == bindparam("ended_id"))


def start_sessions(
    tx: Transaction,
    sessions: Sequence[NewSession],
    ended: Mapping[str, SessionEnd] | None = None,
) -> None:
    """Store ``sessions`` as running, or complete where ``ended`` holds a session's end: a
    session whose end is known when its start is written (one that ended within the
    writer's batch, an import) takes one INSERT instead of an INSERT and an UPDATE."""
    if sessions:
        ends = ended or {}
        tx.execute(_START, [_session_columns(new, ends.get(new.id)) for new in sessions])


def add_turns(tx: Transaction, turns: Sequence[NewTurn]) -> None:
    """Store ``turns``; a turn without ``created_at`` is stamped now."""
    if turns:
        tx.execute(_ADD_TURNS, [_turn_columns(new) for new in turns])


def add_questionnaire_answers(tx: Transaction, answers: Sequence[NewQuestionnaireAnswer]) -> None:
    if answers:
        tx.execute(insert(QuestionnaireResponseRow), [_answer_columns(new) for new in answers])


def finish_sessions(tx: Transaction, ends: Sequence[SessionEnd]) -> None:
    """Mark the sessions complete with how they ended."""
    # UPDATE by primary key: one executemany per set of columns (ends with and without
    # the simulator's calls), not one statement per row.
    by_columns: dict[frozenset[str], list[Columns]] = {}
    for end in ends:
        row = _end_columns(end)
        by_columns.setdefault(frozenset(row), []).append(row)
    for rows in by_columns.values():
        tx.execute(_END, rows)


def store_session(
    tx: Transaction, session: NewSession, turns: Sequence[TurnRecord], end: SessionEnd
) -> None:
    """A whole session at once (one recorded elsewhere): its start, turns and end."""
    start_sessions(tx, [session], {session.id: end})
    add_turns(tx, [NewTurn(session.id, turn) for turn in turns])


# -- reads and clean-ups ----------------------------------------------------------------------


def load_session(db: Database, session_id: str) -> SessionRecord:
    with db.session() as s:
        row = s.scalars(
            select(SessionRow)
            .where(SessionRow.id == session_id)
            .options(selectinload(SessionRow.turns))
        ).first()
        if row is None:
            raise NotFoundError(f"no session '{session_id}'")
        return _session_record(row)


def count_complete_sessions(db: Database, run_ids: Sequence[str]) -> int:
    """How many complete sessions ``run_ids`` hold: what an export walks."""
    with db.session() as s:
        count = s.scalar(
            select(func.count())
            .select_from(SessionRow)
            .where(SessionRow.run_id.in_(list(run_ids)), SessionRow.status == "complete")
        )
        return count or 0


def iter_sessions(
    db: Database,
    run_id: str | None = None,
    *,
    session_ids: Sequence[str] | None = None,
    batch_size: int = 500,
) -> Iterator[SessionRecord]:
    """Stream complete sessions (of ``run_id``, of ``session_ids``) by id, a batch at a
    time (flat memory)."""
    scope = [SessionRow.status == "complete"]
    if run_id is not None:
        scope.append(SessionRow.run_id == run_id)
    chunks = (
        scalar_chunks(db, select(SessionRow.id).where(*scope).order_by(SessionRow.id), batch_size)
        if session_ids is None
        else in_chunks(sorted(set(session_ids)), batch_size)
    )
    for chunk in chunks:
        with db.session() as s:
            rows = s.scalars(
                select(SessionRow)
                .where(SessionRow.id.in_(chunk), *scope)
                .options(selectinload(SessionRow.turns))
                .order_by(SessionRow.id)
            )
            records = [_session_record(row) for row in rows]
        yield from records


@dataclass(frozen=True, slots=True)
class SessionState:
    """Where a stored session stands, whatever its status, without its texts: what a
    resume, a stop or a crash leaves behind."""

    id: str
    run_id: str | None
    work_key: str | None
    status: SessionStatus
    end_reason: EndReason | None
    end_detail: str | None
    started_at: datetime
    """In UTC on every backend."""
    turns: int
    error_turns: int


def session_states(db: Database, run_id: str | None = None) -> list[SessionState]:
    """Every stored session of ``run_id`` (of every run: ``None``), running ones too, by id."""
    columns = (
        SessionRow.id,
        SessionRow.run_id,
        SessionRow.work_key,
        SessionRow.status,
        SessionRow.end_reason,
        SessionRow.end_detail,
        SessionRow.started_at,
    )
    failed = case((TurnRow.error.is_not(None), 1), else_=0)
    query = (
        select(
            *columns,
            func.count(TurnRow.id).label("turns"),
            func.coalesce(func.sum(failed), 0).label("error_turns"),
        )
        .outerjoin(TurnRow, TurnRow.session_id == SessionRow.id)
        .group_by(*columns)
        .order_by(SessionRow.id)
    )
    if run_id is not None:
        query = query.where(SessionRow.run_id == run_id)
    with db.session() as s:
        rows = s.execute(query).all()
    return [
        SessionState(
            id=row.id,
            run_id=row.run_id,
            work_key=row.work_key,
            status=SessionStatus(row.status),
            end_reason=EndReason(row.end_reason) if row.end_reason else None,
            end_detail=row.end_detail,
            started_at=as_utc(row.started_at),
            turns=int(row.turns),
            error_turns=int(row.error_turns),
        )
        for row in rows
    ]


def completed_work_keys(db: Database, run_id: str) -> set[str]:
    with db.session() as s:
        keys = s.scalars(
            select(SessionRow.work_key).where(
                SessionRow.run_id == run_id, SessionRow.status == "complete"
            )
        )
        return {key for key in keys if key is not None}


def count_completed_work(db: Database, run_id: str) -> int:
    """How many work keys :func:`completed_work_keys` holds, counted by the database
    (a run's end asks only how many, and a run may hold thousands)."""
    with db.session() as s:
        count = s.scalar(
            select(func.count(SessionRow.work_key.distinct())).where(
                SessionRow.run_id == run_id, SessionRow.status == "complete"
            )
        )
        return count or 0


def discard_incomplete_sessions(
    db: Database, run_id: str, work_keys: Collection[str] | None = None
) -> int:
    """Delete sessions a killed run (or only the work items ``work_keys`` of a dead
    worker) left half-done, so that they are redone whole.

    Applications keep dialogue state that cannot be rebuilt, so a half-finished dialogue
    is restarted from its first turn rather than continued.
    """
    query = select(SessionRow.id).where(
        SessionRow.run_id == run_id, SessionRow.status != "complete"
    )
    if work_keys is not None:
        query = query.where(SessionRow.work_key.in_(list(work_keys)))
    with db.session() as s:
        ids = list(s.scalars(query))
        if ids:
            s.execute(delete(TurnRow).where(TurnRow.session_id.in_(ids)))
            s.execute(
                delete(QuestionnaireResponseRow).where(QuestionnaireResponseRow.session_id.in_(ids))
            )
            s.execute(delete(SessionRow).where(SessionRow.id.in_(ids)))
        return len(ids)


def _session_record(row: SessionRow) -> SessionRecord:
    return SessionRecord(
        id=row.id,
        run_id=row.run_id,
        application=row.application.name,
        scenario=row.scenario,
        level=Level(row.level),
        source=SessionSource(row.source),
        status=SessionStatus(row.status),
        end_reason=EndReason(row.end_reason) if row.end_reason else None,
        end_detail=row.end_detail,
        provenance=Provenance.model_validate(row.provenance),
        persona=row.persona,
        strategy=row.strategy,
        first_success_turn=row.first_success_turn,
        started_at=row.started_at,
        ended_at=row.ended_at,
        turns=[
            TurnRecord(
                index=turn.idx,
                user_text=turn.user_text,
                response_text=turn.response_text,
                error=turn.error,
                latency_ms=turn.latency_ms,
                prompt_tokens=turn.prompt_tokens,
                completion_tokens=turn.completion_tokens,
                created_at=turn.created_at,
                meta=turn.meta,
                messages=messages_from_column(turn.messages),
            )
            for turn in row.turns
        ],
    )


# -- records as columns --------------------------------------------------------------------

_UNKNOWN_SIMULATOR = (SessionSource.SIMULATED, SessionSource.IMPORTED)


def _session_columns(session: NewSession, end: SessionEnd | None = None) -> Columns:
    """The session's row as it starts, or as it ends when ``end`` is known already (every
    row has the same columns, so that one executemany takes them all)."""
    return {
        "id": session.id,
        "run_id": session.run_id,
        "work_key": session.work_key,
        "application_id": session.application_id,
        "scenario": session.scenario,
        "level": session.level.value,
        "source": session.source.value,
        "status": SessionStatus.RUNNING.value,
        "provenance": session.provenance.model_dump(mode="json"),
        "persona": session.persona,
        "strategy": session.strategy,
        "started_at": session.started_at,
        "tester_id": session.tester_id,
        # A simulated session's calls are known when it finishes; an imported one's never.
        **_simulator_columns(None if session.source in _UNKNOWN_SIMULATOR else ModelUsage()),
        **(_NOT_ENDED if end is None else _ended_columns(end)),
    }


_NOT_ENDED: Columns = {
    "end_reason": None,
    "end_detail": None,
    "first_success_turn": None,
    "ended_at": None,
}


def _simulator_columns(usage: ModelUsage | None) -> dict[str, int | None]:
    """A session's simulator usage as columns (``None``: not recorded)."""
    return {
        "simulator_calls": None if usage is None else usage.calls,
        "simulator_prompt_tokens": None if usage is None else usage.prompt_tokens,
        "simulator_completion_tokens": None if usage is None else usage.completion_tokens,
    }


def _end_columns(end: SessionEnd) -> Columns:
    """The UPDATE of an ended session's row."""
    return {"ended_id": end.session_id, **_ended_columns(end)}


def _ended_columns(end: SessionEnd) -> Columns:
    return {
        "status": SessionStatus.COMPLETE.value,
        "end_reason": end.end_reason.value if end.end_reason is not None else None,
        "end_detail": end.end_detail,
        "first_success_turn": end.first_success_turn,
        "ended_at": end.ended_at,
        **(_simulator_columns(end.simulator) if end.simulator is not None else {}),
    }


_TURN_TEXT = ("user_text", "response_text", "error")


def _turn_columns(new: NewTurn) -> Columns:
    """The turn's row; its meta notes which texts had unstorable characters replaced."""
    turn = new.turn
    row: Columns = {
        "session_id": new.session_id,
        "idx": turn.index,
        "user_text": turn.user_text,
        "response_text": turn.response_text,
        "error": turn.error,
        "latency_ms": turn.latency_ms,
        "prompt_tokens": turn.prompt_tokens,
        "completion_tokens": turn.completion_tokens,
        "meta": turn.meta,
        "messages": _stored_messages(turn.messages),
        "created_at": turn.created_at or utcnow(),
    }
    row = marked(row, _TURN_TEXT, into="meta")
    messages = row["messages"]
    if messages is not None and storable_parameters(messages) is not messages:
        replaced = [*row["meta"].get("replaced_unstorable", ()), "messages"]
        row["meta"] = {**row["meta"], "replaced_unstorable": replaced}
    return row


def _stored_messages(messages: Sequence[Message] | None) -> list[JsonObject] | None:
    """A turn's messages as its JSON column holds them (``None``: a plain turn)."""
    if messages is None:
        return None
    return [message.model_dump(mode="json", exclude_defaults=True) for message in messages]


def messages_from_column(stored: list[Any] | None) -> tuple[Message, ...] | None:
    """A turn's messages as its JSON column holds them, read back."""
    if stored is None:
        return None
    return tuple(Message.model_validate(message) for message in stored)


def _answer_columns(answer: NewQuestionnaireAnswer) -> Columns:
    row = {
        "session_id": answer.session_id,
        "respondent": answer.respondent,
        "simulated": answer.simulated,
        "item_id": answer.item_id,
        "value_num": answer.value,
        "value_text": answer.text,
        "provenance": answer.provenance,
        "created_at": answer.created_at,
    }
    return marked(row, ("value_text",), into="provenance")
