"""Queries the measurement core reads: dialogues with their measurability, resolutions, series.

A dialogue is *measurable* when the application answered at least once: some turn has a
reply and no error. One that never got a reply (the application failed, the simulated
user failed before the application spoke, or nothing came back) says nothing about the
application's behaviour, so it is excluded from rates and reported with its reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, Subquery, and_, case, func, select

from corix.domain import EndReason, JsonObject
from corix.storage.database import IN_CHUNK, Database, in_chunks, scalar_chunks
from corix.storage.orm import (
    ApplicationRow,
    EvaluationRow,
    ResolutionRow,
    RunRow,
    SessionRow,
    TurnRow,
)

__all__ = [
    "MeasuredDialogue",
    "StoredResolution",
    "answered_turns",
    "evaluation_runs",
    "iter_measured_dialogues",
    "measured_dialogues",
    "series_runs",
    "stored_resolutions",
    "tester_of",
]

_UNFINISHED = ("running",)


@dataclass(frozen=True, slots=True)
class MeasuredDialogue:
    """A finished dialogue and what measurement groups it by (never shown to annotators).

    ``key`` names the dialogue across reruns of a plan (its work-item key; a person's
    session keeps its id), prefixed by the run's position when several runs are measured
    together.
    ``not_measurable`` is the reason it is left out of rates, or ``None``. ``tester``
    names who produced it, so the bootstrap can resample testers (see
    :func:`tester_of`); ``""`` when unknown (the dialogue is a tester of its own).
    """

    session_id: str
    key: str
    run_id: str
    application: str
    scenario: str
    level: str
    source: str
    tester_id: int | None
    not_measurable: str | None
    tester: str = ""


def tester_of(source: str, tester_id: int | None, provenance: JsonObject) -> str:
    """Who produced a dialogue: the person for a human session, the persona instance
    (template × parameters × seed) for a simulated one, the script (template ×
    parameters) for model testing; ``""`` when unknown (an imported dialogue)."""
    if tester_id is not None:
        return f"tester {tester_id}"
    template = provenance.get("template")
    if not template or source not in ("simulated", "scripted"):
        return ""
    parameters = json.dumps(provenance.get("parameters") or {}, sort_keys=True, default=str)
    if source == "scripted":
        return f"script {template} {parameters}"
    return f"persona {template} {parameters} seed {provenance.get('seed')}"


@dataclass(frozen=True, slots=True)
class StoredResolution:
    """A senior annotator's decision on one disputed answer."""

    session_id: str
    category: str
    question_id: str
    turn_index: int | None
    status: str
    value: str | float | None


def answered_turns(session_ids: Sequence[str] | None = None) -> Subquery:
    """Per session: ``answered`` counts the turns the application replied to without an
    error (none: the dialogue is not measurable); ``error`` is one turn error, if any.

    ``session_ids`` limits the count to those sessions (a chunk), so that reading a chunk
    does not aggregate every turn of the database.
    """
    replied = and_(TurnRow.response_text.is_not(None), TurnRow.response_text != "")
    answered = case((and_(replied, TurnRow.error.is_(None)), 1), else_=0)
    query = select(
        TurnRow.session_id,
        func.sum(answered).label("answered"),
        func.min(TurnRow.error).label("error"),
    )
    if session_ids is not None:
        query = query.where(TurnRow.session_id.in_(list(session_ids)))
    return query.group_by(TurnRow.session_id).subquery()


def measured_dialogues(db: Database, run_ids: Sequence[str]) -> list[MeasuredDialogue]:
    """The finished dialogues of ``run_ids``, ordered by run and key."""
    found = _dialogues(db, run_ids, _dialogue_query(run_ids, answered_turns()))
    position = _positions(run_ids)
    return sorted(found, key=lambda d: (position[d.run_id], d.key))


def iter_measured_dialogues(
    db: Database, run_ids: Sequence[str], *, chunk_size: int = IN_CHUNK
) -> Iterator[list[MeasuredDialogue]]:
    """The dialogues :func:`measured_dialogues` gives, ``chunk_size`` at a time ordered by
    session id, read from one ordered stream of ids: memory stays flat however many
    sessions the runs hold."""
    ids = (
        select(SessionRow.id)
        .where(SessionRow.run_id.in_(run_ids), SessionRow.status.not_in(_UNFINISHED))
        .order_by(SessionRow.id)
    )
    for chunk in scalar_chunks(db, ids, chunk_size):
        query = _dialogue_query(run_ids, answered_turns(chunk)).where(SessionRow.id.in_(chunk))
        yield sorted(_dialogues(db, run_ids, query), key=lambda d: d.session_id)


def _dialogue_query(run_ids: Sequence[str], turns: Subquery) -> Select[tuple[Any, ...]]:
    return (
        select(
            SessionRow.id,
            SessionRow.run_id,
            SessionRow.work_key,
            ApplicationRow.name,
            SessionRow.scenario,
            SessionRow.level,
            SessionRow.source,
            SessionRow.tester_id,
            SessionRow.end_reason,
            func.coalesce(turns.c.answered, 0),
            turns.c.error,
            SessionRow.provenance,
            SessionRow.end_detail,
        )
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .outerjoin(turns, turns.c.session_id == SessionRow.id)
        .where(SessionRow.run_id.in_(run_ids), SessionRow.status.not_in(_UNFINISHED))
    )


def _positions(run_ids: Sequence[str]) -> dict[str, int]:
    return {run_id: index for index, run_id in enumerate(dict.fromkeys(run_ids))}


def _dialogues(
    db: Database, run_ids: Sequence[str], query: Select[tuple[Any, ...]]
) -> list[MeasuredDialogue]:
    # Several runs (a series): the run's position in ``run_ids`` prefixes the key, not its
    # random id, so measuring a rerun series resamples the same way.
    position = _positions(run_ids)
    prefix = len(position) > 1
    with db.session() as s:
        return [
            MeasuredDialogue(
                session_id=row[0],
                key=f"{position[row[1]]}/{row[2] or row[0]}" if prefix else (row[2] or row[0]),
                run_id=row[1],
                application=row[3],
                scenario=row[4],
                level=row[5],
                source=row[6],
                tester_id=row[7],
                not_measurable=_not_measurable(row[8], row[9], row[10], row[12]),
                tester=tester_of(row[6], row[7], row[11] or {}),
            )
            for row in s.execute(query)
        ]


_FAILED_ENDINGS = frozenset({EndReason.APP_ERROR.value, EndReason.SIMULATOR_ERROR.value})


def _not_measurable(
    end_reason: str | None, answered: int, error: str | None, detail: str | None
) -> str | None:
    """Why a dialogue is left out of rates, or ``None``: one recorded elsewhere that ended
    there in an error, whatever it holds, or one the application never answered."""
    if end_reason == EndReason.SOURCE_ERROR.value:
        return _first_line(f"{end_reason}: {detail}" if detail else end_reason)
    return None if answered else _reason(end_reason, error)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:200]


def _reason(end_reason: str | None, error: str | None) -> str:
    """Why a dialogue without a reply is not measurable: the failure that ended it, or —
    when it ended normally (a script ran out, a tester left) — that nothing was answered."""
    kind = end_reason if end_reason in _FAILED_ENDINGS else "no application reply"
    if error and error.strip():
        return f"{kind}: {_first_line(error)}"
    return kind


def stored_resolutions(db: Database, session_ids: Sequence[str]) -> list[StoredResolution]:
    """The resolutions recorded for ``session_ids``, the latest per answer last."""
    found: list[StoredResolution] = []
    with db.session() as s:
        for chunk in in_chunks(session_ids):
            query = (
                select(ResolutionRow)
                .where(ResolutionRow.session_id.in_(chunk))
                .order_by(ResolutionRow.created_at, ResolutionRow.id)
            )
            for row in s.scalars(query):
                value = row.value_num if row.value_num is not None else row.value_text
                found.append(
                    StoredResolution(
                        session_id=row.session_id,
                        category=row.category,
                        question_id=row.question_id,
                        turn_index=row.turn_index,
                        status=row.status,
                        value=value,
                    )
                )
    return found


def series_runs(db: Database, series: str) -> list[str]:
    """The ids of every run of the evaluation series named ``series``, oldest first."""
    with db.session() as s:
        evaluation = s.scalar(select(EvaluationRow.id).where(EvaluationRow.name == series))
    return [] if evaluation is None else evaluation_runs(db, evaluation)


def evaluation_runs(db: Database, evaluation_id: str) -> list[str]:
    """The ids of every run of the evaluation series ``evaluation_id``, oldest first."""
    query = (
        select(RunRow.id)
        .where(RunRow.evaluation_id == evaluation_id)
        .order_by(RunRow.created_at, RunRow.id)
    )
    with db.session() as s:
        return list(s.scalars(query))
