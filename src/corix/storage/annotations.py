"""Queries over stored annotations: passes with their answers, consensus rows, session facts.

Reads return the plain frozen records of :mod:`corix.storage.store_records`, not ORM rows, so
they can cross threads and outlive the database session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from sqlalchemy import CursorResult, Delete, Select, delete, func, insert, select, tuple_
from sqlalchemy.orm import Session

from corix.domain import EndReason
from corix.storage.database import Database, in_chunks
from corix.storage.measured import answered_turns
from corix.storage.orm import (
    AnnotationAnswerRow,
    AnnotationConsensusRow,
    AnnotationPassRow,
    ApplicationRow,
    SessionRow,
    TurnRow,
)
from corix.storage.store_records import (
    NewPass,
    StoredAnswer,
    StoredConsensus,
    StoredPass,
    StoredValue,
    consensus_columns,
    pass_columns,
)

RowT = TypeVar("RowT", AnnotationPassRow, AnnotationConsensusRow)


def _joined(value_num: float | None, value_text: str | None) -> StoredValue | None:
    return value_num if value_num is not None else value_text


@dataclass(frozen=True)
class SessionInfo:
    """What summaries group annotations by; never shown to annotators."""

    id: str
    application: str
    scenario: str
    level: str
    n_turns: int


def session_infos(
    db: Database, run_id: str, *, answered_only: bool = False
) -> dict[str, SessionInfo]:
    """Complete sessions of ``run_id`` by id, with their application, scenario and level.

    ``answered_only`` leaves out sessions the application never answered and those that
    ended in an error where they were recorded: they are not measurable, so annotators
    skip them (imported labels for them are still accepted).
    """
    turns = (
        select(TurnRow.session_id, func.count().label("n")).group_by(TurnRow.session_id).subquery()
    )
    answered = answered_turns()
    query = (
        select(
            SessionRow.id,
            ApplicationRow.name,
            SessionRow.scenario,
            SessionRow.level,
            func.coalesce(turns.c.n, 0),
        )
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .outerjoin(turns, turns.c.session_id == SessionRow.id)
        .outerjoin(answered, answered.c.session_id == SessionRow.id)
        .where(SessionRow.run_id == run_id, SessionRow.status == "complete")
        .order_by(SessionRow.id)
    )
    if answered_only:
        query = query.where(
            answered.c.answered > 0,
            SessionRow.end_reason.is_distinct_from(EndReason.SOURCE_ERROR.value),
        )
    with db.session() as s:
        return {
            row[0]: SessionInfo(
                id=row[0], application=row[1], scenario=row[2], level=row[3], n_turns=int(row[4])
            )
            for row in s.execute(query)
        }


def _scoped(
    query: Select[tuple[RowT]],
    row: type[AnnotationPassRow] | type[AnnotationConsensusRow],
    run_id: str | None,
    session_ids: Sequence[str] | None,
    annotator: str | None,
) -> Select[tuple[RowT]]:
    """Narrow a query over passes or consensus rows to a run, sessions and/or an annotator."""
    if run_id is not None:
        query = query.join(SessionRow, SessionRow.id == row.session_id).where(
            SessionRow.run_id == run_id
        )
    if session_ids is not None:
        query = query.where(row.session_id.in_(list(session_ids)))
    if annotator is not None:
        query = query.where(row.annotator == annotator)
    return query


def _session_chunks(session_ids: Sequence[str] | None) -> list[list[str] | None]:
    """The ``IN`` lists a read by ``session_ids`` makes (one unscoped read: ``None``); the
    ids sorted, so reads ordered by session add up to one ordered list."""
    if session_ids is None:
        return [None]
    return list(in_chunks(sorted(set(session_ids))))


def load_passes(
    db: Database,
    *,
    run_id: str | None = None,
    session_ids: Sequence[str] | None = None,
    annotator: str | None = None,
) -> list[StoredPass]:
    """Passes with their answers, ordered by session, category, annotator, pass and repeat."""
    rows: list[AnnotationPassRow] = []
    with db.session() as s:
        for chunk in _session_chunks(session_ids):
            query = _scoped(select(AnnotationPassRow), AnnotationPassRow, run_id, chunk, annotator)
            query = query.order_by(
                AnnotationPassRow.session_id,
                AnnotationPassRow.category,
                AnnotationPassRow.annotator,
                AnnotationPassRow.pass_no,
                AnnotationPassRow.repeat_no,
            )
            rows.extend(s.scalars(query))
        answers = _answers_by_pass(s, [row.id for row in rows])
    return [
        StoredPass(
            id=row.id,
            session_id=row.session_id,
            category=row.category,
            annotator=row.annotator,
            annotator_kind=row.annotator_kind,
            pass_no=row.pass_no,
            repeat_no=row.repeat_no,
            status=row.status,
            error=row.error,
            provenance=row.provenance,
            flagged=row.flagged,
            note=row.note,
            answers=tuple(answers.get(row.id, ())),
        )
        for row in rows
    ]


_STREAM = 2_000  # rows fetched at a time when a query walks a whole run


def pass_annotators(db: Database, run_ids: Sequence[str]) -> set[tuple[str, str, str | None]]:
    """Every ``(annotator, kind, guideline version)`` with a pass in ``run_ids``, read
    without loading the passes (rows stream ``_STREAM`` at a time)."""
    query = (
        select(
            AnnotationPassRow.annotator,
            AnnotationPassRow.annotator_kind,
            AnnotationPassRow.provenance,
        )
        .join(SessionRow, SessionRow.id == AnnotationPassRow.session_id)
        .where(SessionRow.run_id.in_(run_ids))
    )
    with db.session() as s:
        return {
            (name, kind, provenance.get("guideline_version"))
            for name, kind, provenance in s.execute(query).yield_per(_STREAM)
        }


def _answers_by_pass(s: Session, pass_ids: list[int]) -> dict[int, list[StoredAnswer]]:
    found: dict[int, list[StoredAnswer]] = {}
    for chunk in in_chunks(pass_ids):
        query = (
            select(
                AnnotationAnswerRow.pass_id,
                AnnotationAnswerRow.question_id,
                AnnotationAnswerRow.turn_index,
                AnnotationAnswerRow.value_num,
                AnnotationAnswerRow.value_text,
                AnnotationAnswerRow.reasoning,
            )
            .where(AnnotationAnswerRow.pass_id.in_(chunk))
            .order_by(AnnotationAnswerRow.id)
        )
        for pass_id, question_id, turn_index, number, text, reasoning in s.execute(query):
            found.setdefault(pass_id, []).append(
                StoredAnswer(question_id, turn_index, _joined(number, text), reasoning)
            )
    return found


def load_consensus(
    db: Database,
    *,
    run_id: str | None = None,
    session_ids: Sequence[str] | None = None,
    annotator: str | None = None,
) -> list[StoredConsensus]:
    """Consensus rows by session, in stored order."""
    rows: list[AnnotationConsensusRow] = []
    with db.session() as s:
        for chunk in _session_chunks(session_ids):
            query = _scoped(
                select(AnnotationConsensusRow), AnnotationConsensusRow, run_id, chunk, annotator
            )
            rows.extend(
                s.scalars(
                    query.order_by(AnnotationConsensusRow.session_id, AnnotationConsensusRow.id)
                )
            )
        return [
            StoredConsensus(
                session_id=row.session_id,
                category=row.category,
                annotator=row.annotator,
                question_id=row.question_id,
                turn_index=row.turn_index,
                value=_joined(row.value_num, row.value_text),
                method=row.method,
                n_runs=row.n_runs,
                flip_rate=row.flip_rate,
            )
            for row in rows
        ]


def _deleted(s: Session, statement: Delete) -> int:
    """Run a DELETE and return how many rows it removed."""
    return cast(CursorResult[Any], s.execute(statement)).rowcount


def delete_consensus(db: Database, keys: Iterable[tuple[str, str, str]]) -> int:
    """Delete the consensus rows of each ``(session_id, category, annotator)``."""
    wanted = list(keys)
    deleted = 0
    with db.session() as s:
        for chunk in in_chunks(wanted):
            result = _deleted(
                s,
                delete(AnnotationConsensusRow).where(
                    tuple_(
                        AnnotationConsensusRow.session_id,
                        AnnotationConsensusRow.category,
                        AnnotationConsensusRow.annotator,
                    ).in_(chunk)
                ),
            )
            deleted += result
    return deleted


def delete_failed_passes(
    db: Database,
    run_id: str,
    annotator: str,
    *,
    kind: str,
    guidelines: Mapping[str, str],
) -> int:
    """Delete ``annotator``'s failed passes in ``run_id`` that the annotator being run redoes.

    Two annotators may store under one name (``llm`` and ``llm-harms`` both as
    ``llm:<model>``), so only passes of this ``kind`` whose category is a key of
    ``guidelines`` and whose stored guideline version starts with that key's value are
    deleted; another annotator's failures stay for it to redo.
    """
    in_run = select(SessionRow.id).where(SessionRow.run_id == run_id)
    with db.session() as s:
        failed = s.execute(
            select(
                AnnotationPassRow.id, AnnotationPassRow.category, AnnotationPassRow.provenance
            ).where(
                AnnotationPassRow.annotator == annotator,
                AnnotationPassRow.annotator_kind == kind,
                AnnotationPassRow.status == "failed",
                AnnotationPassRow.category.in_(list(guidelines)),
                AnnotationPassRow.session_id.in_(in_run),
            )
        ).all()
        doomed = [
            pass_id
            for pass_id, category, provenance in failed
            if guidelines[category]
            in str((provenance or {}).get("guideline_version", "")).split("/")
        ]
        deleted = 0
        for chunk in in_chunks(doomed):
            deleted += _deleted(s, delete(AnnotationPassRow).where(AnnotationPassRow.id.in_(chunk)))
        return deleted


def insert_passes(db: Database, passes: Sequence[NewPass]) -> int:
    """Insert passes and their answers in one transaction: all of them or none."""
    with db.session() as s:
        add_passes(s, passes)
    return len(passes)


def add_pass(tx: Session, new: NewPass) -> int:
    """Insert one pass and its answers in the open transaction ``tx``; return its id."""
    (pass_id,) = add_passes(tx, [new])
    return pass_id


def add_passes(tx: Session, passes: Sequence[NewPass]) -> list[int]:
    """Insert passes and their answers in the open transaction ``tx``; return their ids.

    Every source of passes (the annotation writer, imported labels, a person in the web)
    writes them here, so their storable-text note and usage are recorded alike."""
    if not passes:
        return []
    rows = [pass_columns(new) for new in passes]
    # One multi-row INSERT … RETURNING, ids in input order.
    pass_ids = list(
        tx.scalars(
            insert(AnnotationPassRow).returning(AnnotationPassRow.id, sort_by_parameter_order=True),
            [pass_row for pass_row, _ in rows],
        )
    )
    answer_rows = [
        {**answer, "pass_id": pass_id}
        for pass_id, (_, answers) in zip(pass_ids, rows, strict=True)
        for answer in answers
    ]
    if answer_rows:
        tx.execute(insert(AnnotationAnswerRow), answer_rows)
    return pass_ids


def add_consensus(tx: Session, rows: Sequence[StoredConsensus]) -> None:
    if rows:
        tx.execute(insert(AnnotationConsensusRow), [consensus_columns(row) for row in rows])


PassKey = tuple[str, str, str, int, int]
"""(session_id, category, annotator, pass_no, repeat_no): what makes a pass unique."""


def pass_keys(db: Database, run_id: str) -> set[PassKey]:
    """The keys of every pass stored for ``run_id``, without their answers."""
    query = (
        select(
            AnnotationPassRow.session_id,
            AnnotationPassRow.category,
            AnnotationPassRow.annotator,
            AnnotationPassRow.pass_no,
            AnnotationPassRow.repeat_no,
        )
        .join(SessionRow, SessionRow.id == AnnotationPassRow.session_id)
        .where(SessionRow.run_id == run_id)
    )
    with db.session() as s:
        return {(row[0], row[1], row[2], row[3], row[4]) for row in s.execute(query)}
