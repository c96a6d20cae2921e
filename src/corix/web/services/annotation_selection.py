"""Which sessions of a series go to human annotators: the admin's choice, never automatic.

- ``all``: every human session (red teaming, field testing); automated runs stay out,
  so starting one never floods the annotators' queues.
- ``sample``: a stratified sample of N complete sessions per application × scenario ×
  level, from every source. Within a cell, sessions are ranked by a hash of the series
  and session ids: the draw is reproducible, unrelated to the order sessions finished,
  and a session once sampled stays sampled while the cell is full.
- ``none``: no session; tasks already claimed can still be finished.

Only measurable sessions are chosen: a dialogue the application never answered says
nothing about it (the measurement core leaves it out of rates), so it would waste a pass.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from enum import StrEnum

from sqlalchemy import ColumnElement, and_, false, select
from sqlalchemy.orm import Session

from corix.domain import SessionSource
from corix.storage.measured import answered_turns
from corix.storage.orm import RunRow, SessionRow


class HumanAnnotation(StrEnum):
    ALL_HUMAN = "all"
    SAMPLE = "sample"
    NONE = "none"

    @property
    def label(self) -> str:
        return SELECTION_LABELS[self]


SELECTION_LABELS = {
    HumanAnnotation.ALL_HUMAN: "Every human session (automated runs stay out)",
    HumanAnnotation.SAMPLE: "A stratified sample of N per application × scenario × level",
    HumanAnnotation.NONE: "None",
}


def _rank(evaluation_id: str, session_id: str) -> str:
    return hashlib.sha256(f"{evaluation_id}/{session_id}".encode()).hexdigest()


def _measurable() -> ColumnElement[bool]:
    """The application answered at least once (the measurement core's definition)."""
    turns = answered_turns()
    return SessionRow.id.in_(select(turns.c.session_id).where(turns.c.answered > 0))


def stratified_sample(s: Session, evaluation_id: str, per_cell: int) -> list[str]:
    """The ids of N complete, measurable sessions per application × scenario × level."""
    rows = s.execute(
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


def selected_for_humans(
    s: Session, evaluation_id: str, selection: HumanAnnotation, sample_size: int
) -> ColumnElement[bool]:
    """A condition on :class:`SessionRow` that holds for the sessions humans annotate."""
    if selection is HumanAnnotation.ALL_HUMAN:
        return and_(SessionRow.source == SessionSource.HUMAN.value, _measurable())
    if selection is HumanAnnotation.SAMPLE and sample_size > 0:
        return SessionRow.id.in_(stratified_sample(s, evaluation_id, sample_size))
    return false()


__all__ = ["HumanAnnotation", "selected_for_humans", "stratified_sample"]
