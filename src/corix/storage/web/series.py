"""Evaluation series: their settings, their runs and the run that holds human sessions."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from corix.domain import HumanRunPlan
from corix.scenarios import PackRecord
from corix.storage.database import Database
from corix.storage.orm import EvaluationRow, RunRow, SessionRow
from corix.storage.orm_web import EvaluationSettingsRow
from corix.storage.runs import NewRun, insert_run, put_in_series
from corix.storage.transactions import Transaction, transaction

__all__ = [
    "SeriesRecord",
    "SeriesRun",
    "SettingsRecord",
    "all_series",
    "complete_sessions_by_level",
    "create_series",
    "link_run",
    "run_ids",
    "runs",
    "series",
    "sessions_by_run",
    "set_assignment_design",
    "set_claim_minutes",
    "set_human_annotation",
    "settings",
]


@dataclass(frozen=True, slots=True)
class SettingsRecord:
    """How a series runs its human work, as stored (names of designs and selections)."""

    passes_per_item: int
    review_rate: float
    max_turns: int
    assignment_design: str
    human_annotation: str
    annotation_sample_size: int
    claim_minutes: float | None
    """``None``: the server's default claim time."""


@dataclass(frozen=True, slots=True)
class SeriesRecord:
    id: str
    name: str
    description: str
    scenarios: list[str]
    levels: list[str]
    settings: SettingsRecord | None
    """``None`` for a series made without the web (its defaults apply)."""


@dataclass(frozen=True, slots=True)
class SeriesRun:
    id: str
    name: str
    status: str
    created_at: datetime


def settings(tx: Transaction, evaluation_id: str) -> SettingsRecord | None:
    row = tx.get(EvaluationSettingsRow, evaluation_id)
    if row is None:
        return None
    return SettingsRecord(
        passes_per_item=row.passes_per_item,
        review_rate=row.review_rate,
        max_turns=row.max_turns,
        assignment_design=row.assignment_design,
        human_annotation=row.human_annotation,
        annotation_sample_size=row.annotation_sample_size,
        claim_minutes=row.claim_minutes,
    )


def create_series(
    db: Database,
    *,
    slug: str,
    name: str,
    description: str,
    scenarios: Sequence[str],
    levels: Sequence[str],
    passes_per_item: int,
    review_rate: float,
    max_turns: int,
    claim_minutes: float | None = None,
    human_run_id: Callable[[str], str],
    human_run_name: str,
    packs: Sequence[PackRecord],
) -> str:
    """Store a series, its settings and its human run (its id made from the series' id by
    ``human_run_id``) with the packs it uses;
    return the series' id, ``slug`` or, when taken, ``slug`` with a random suffix.
    A taken name raises :class:`~corix.storage.web.Duplicate`."""
    with transaction(db) as tx:
        evaluation_id = slug
        while tx.get(EvaluationRow, evaluation_id) is not None:
            evaluation_id = f"{slug}-{secrets.token_hex(2)}"
        tx.add(
            EvaluationRow(
                id=evaluation_id,
                name=name,
                description=description,
                scenarios=list(scenarios),
                levels=list(levels),
            )
        )
        tx.flush()
        tx.add(
            EvaluationSettingsRow(
                evaluation_id=evaluation_id,
                passes_per_item=passes_per_item,
                review_rate=review_rate,
                max_turns=max_turns,
                claim_minutes=claim_minutes,
            )
        )
        run = NewRun(
            human_run_id(evaluation_id),
            human_run_name,
            HumanRunPlan(name=name),
            evaluation_id=evaluation_id,
            packs=tuple(packs),
        )
        insert_run(tx, run)
        return evaluation_id


def _record(tx: Transaction, row: EvaluationRow) -> SeriesRecord:
    return SeriesRecord(
        id=row.id,
        name=row.name,
        description=row.description,
        scenarios=list(row.scenarios),
        levels=list(row.levels),
        settings=settings(tx, row.id),
    )


def all_series(db: Database) -> list[SeriesRecord]:
    """Every series, oldest first."""
    with transaction(db) as tx:
        rows = tx.scalars(select(EvaluationRow).order_by(EvaluationRow.created_at))
        return [_record(tx, row) for row in rows]


def series(tx: Transaction, evaluation_id: str) -> SeriesRecord | None:
    row = tx.get(EvaluationRow, evaluation_id)
    return None if row is None else _record(tx, row)


def set_human_annotation(
    db: Database, evaluation_id: str, selection: str, sample_size: int
) -> bool:
    """Store which sessions go to human annotators; ``False`` if the series has no settings."""
    with transaction(db) as tx:
        row = tx.get(EvaluationSettingsRow, evaluation_id)
        if row is None:
            return False
        row.human_annotation = selection
        row.annotation_sample_size = sample_size
        return True


def set_claim_minutes(db: Database, evaluation_id: str, minutes: float | None) -> bool:
    """Store how long a claim lasts in the series (``None``: the server's default);
    ``False`` if the series has no settings."""
    with transaction(db) as tx:
        row = tx.get(EvaluationSettingsRow, evaluation_id)
        if row is None:
            return False
        row.claim_minutes = minutes
        return True


def set_assignment_design(tx: Transaction, evaluation_id: str, design: str) -> None:
    row = tx.get(EvaluationSettingsRow, evaluation_id)
    if row is not None:
        row.assignment_design = design


def run_ids(db: Database, evaluation_id: str) -> list[str]:
    with transaction(db) as tx:
        return list(tx.scalars(select(RunRow.id).where(RunRow.evaluation_id == evaluation_id)))


def runs(tx: Transaction, evaluation_id: str) -> list[SeriesRun]:
    """The series' runs, oldest first."""
    rows = tx.scalars(
        select(RunRow).where(RunRow.evaluation_id == evaluation_id).order_by(RunRow.created_at)
    )
    return [SeriesRun(row.id, row.name, row.status, row.created_at) for row in rows]


def link_run(db: Database, run_name: str, evaluation_id: str) -> None:
    """Put the run named ``run_name`` (an automated run started for it) in the series."""
    with transaction(db) as tx:
        put_in_series(tx, run_name, evaluation_id)


def complete_sessions_by_level(tx: Transaction, evaluation_id: str) -> dict[str, int]:
    """Level → complete sessions, from every run of the series."""
    rows = tx.execute(
        select(SessionRow.level, func.count())
        .join(RunRow, RunRow.id == SessionRow.run_id)
        .where(RunRow.evaluation_id == evaluation_id, SessionRow.status == "complete")
        .group_by(SessionRow.level)
    )
    return dict(rows.tuples().all())


def sessions_by_run(tx: Transaction, evaluation_id: str) -> dict[str, int]:
    """Run id → sessions stored, for the runs of the series that have any."""
    rows = tx.execute(
        select(SessionRow.run_id, func.count())
        .join(RunRow, RunRow.id == SessionRow.run_id)
        .where(RunRow.evaluation_id == evaluation_id)
        .group_by(SessionRow.run_id)
    )
    return {run_id: count for run_id, count in rows.tuples() if run_id is not None}
