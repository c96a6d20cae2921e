"""Which sessions of a series go to human annotators, as a condition on stored sessions.

- ``all``: every human session (red teaming, field testing); automated runs stay out.
- ``sample``: a stratified sample of N complete sessions per application × scenario ×
  level, from every source. Within a cell, sessions are ranked by a hash of the series
  and session ids: the draw is reproducible, unrelated to the order sessions finished,
  and a session once sampled stays sampled while the cell is full.
- ``plan``: the dialogues of the series' label plan (``corix plan labels --assign``):
  those whose labels narrow an LLM judge's corrected rates most.
- ``none`` (or a sample of 0): no session.

Only measurable sessions are chosen: a dialogue the application never answered says
nothing about it (the measurement core leaves it out of rates), so it would waste a pass.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import ColumnElement, and_, delete, false, select

from corix.domain import SessionSource
from corix.storage.database import Database
from corix.storage.measured import answered_turns
from corix.storage.orm import EvaluationRow, RunRow, SessionRow
from corix.storage.orm_web import EvaluationSettingsRow, LabelPlanRow
from corix.storage.transactions import Transaction, transaction

__all__ = [
    "EVERY_HUMAN_SESSION",
    "LABEL_PLAN",
    "SAMPLE",
    "assign_label_plan",
    "for_humans",
    "label_plan",
    "set_label_plan",
    "stratified_sample",
]

EVERY_HUMAN_SESSION = "all"
SAMPLE = "sample"
LABEL_PLAN = "plan"


def _rank(evaluation_id: str, session_id: str) -> str:
    return hashlib.sha256(f"{evaluation_id}/{session_id}".encode()).hexdigest()


def _measurable() -> ColumnElement[bool]:
    """The application answered at least once (the measurement core's definition)."""
    turns = answered_turns()
    return SessionRow.id.in_(select(turns.c.session_id).where(turns.c.answered > 0))


def stratified_sample(tx: Transaction, evaluation_id: str, per_cell: int) -> list[str]:
    """The ids of N complete, measurable sessions per application × scenario × level."""
    rows = tx.execute(
        select(SessionRow.id, SessionRow.application_id, SessionRow.scenario, SessionRow.level)
        .join(RunRow, RunRow.id == SessionRow.run_id)
        .where(
            RunRow.evaluation_id == evaluation_id,
            SessionRow.status == "complete",
            _measurable(),
        )
    ).tuples()
    cells: defaultdict[tuple[int | None, str, str], list[str]] = defaultdict(list)
    for session_id, application_id, scenario, level in rows:
        cells[(application_id, scenario, level)].append(session_id)
    chosen: list[str] = []
    for members in cells.values():
        members.sort(key=lambda session_id: _rank(evaluation_id, session_id))
        chosen.extend(members[:per_cell])
    return chosen


def for_humans(
    tx: Transaction, evaluation_id: str, selection: str, sample_size: int
) -> ColumnElement[bool]:
    """A condition on stored sessions that holds for those humans annotate."""
    if selection == EVERY_HUMAN_SESSION:
        return and_(SessionRow.source == SessionSource.HUMAN.value, _measurable())
    if selection == SAMPLE and sample_size > 0:
        return SessionRow.id.in_(stratified_sample(tx, evaluation_id, sample_size))
    if selection == LABEL_PLAN:
        planned = select(LabelPlanRow.session_id).where(LabelPlanRow.evaluation_id == evaluation_id)
        return and_(SessionRow.id.in_(planned), _measurable())
    return false()


def set_label_plan(tx: Transaction, evaluation_id: str, session_ids: Sequence[str]) -> bool:
    """Make ``session_ids`` the series' label plan, replacing the last one, and its
    annotation queue's selection; ``False`` if the series has no web settings."""
    settings = tx.get(EvaluationSettingsRow, evaluation_id)
    if settings is None:
        return False
    tx.execute(delete(LabelPlanRow).where(LabelPlanRow.evaluation_id == evaluation_id))
    tx.add_all(LabelPlanRow(evaluation_id=evaluation_id, session_id=s) for s in session_ids)
    settings.human_annotation = LABEL_PLAN
    settings.annotation_sample_size = 0
    return True


def assign_label_plan(
    db: Database, session_ids: Sequence[str], *, series: str | None, run_id: str | None
) -> str | None:
    """Make ``session_ids`` the label plan of the web series named ``series`` (or of
    ``run_id``'s series); the series' id, or ``None`` when there is no such web series."""
    with transaction(db) as tx:
        if series is not None:
            found = tx.scalar(select(EvaluationRow.id).where(EvaluationRow.name == series))
        else:
            found = tx.scalar(select(RunRow.evaluation_id).where(RunRow.id == run_id))
        if found is None or not set_label_plan(tx, found, session_ids):
            return None
        return found


def label_plan(tx: Transaction, evaluation_id: str) -> list[str]:
    """The session ids of the series' label plan, sorted."""
    return sorted(
        tx.scalars(
            select(LabelPlanRow.session_id).where(LabelPlanRow.evaluation_id == evaluation_id)
        )
    )
