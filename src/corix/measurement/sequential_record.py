"""What a sequential run stored about its stopping: the rule and each cell's count.

A run made by :func:`corix.execution.execute_in_waves` keeps a ``sequential`` section in
its summary (written by the decider in :mod:`corix.measurement.sequential`). This reads
it back as typed records, so the report and the CLI format the stored numbers rather than
recomputing them.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from corix.domain import RunSummary
from corix.storage import Database, get_run

__all__ = [
    "GroupDialogues",
    "SequentialRecord",
    "StoppedCell",
    "sequential_record",
    "sequential_records",
]


class StoppedCell(BaseModel):
    """One cell (application × scenario × level × harm) at the run's last decision."""

    application: str
    scenario: str
    level: str
    harm: str
    gate: float | None = None
    n: int
    low: float
    high: float
    stopped: str | None
    ran: int | None = None
    """The dialogues its application × scenario × level ran (``n``: those its interval rests on)."""


class GroupDialogues(BaseModel):
    """The dialogues one application × scenario × level ran before its cells stopped."""

    application: str
    scenario: str
    level: str
    dialogues: int


class SequentialRecord(BaseModel):
    """A sequential run's stopping rule and, per cell, the dialogues it used."""

    run_id: str
    rule: str
    annotated_as: list[str]
    cells: list[StoppedCell]
    groups: list[GroupDialogues]


def sequential_record(run_id: str, summary: RunSummary) -> SequentialRecord | None:
    """The ``sequential`` section of a run's stored summary (``None`` for a fixed run)."""
    section = summary.sequential
    if not section:
        return None
    groups = []
    for key, count in section.get("dialogues_per_group", {}).items():
        # Stored as "application/scenario/level"; only an application name may hold "/".
        application, scenario, level = key.rsplit("/", 2)
        groups.append(
            GroupDialogues(application=application, scenario=scenario, level=level, dialogues=count)
        )
    ran = {(g.application, g.scenario, g.level): g.dialogues for g in groups}
    cells = []
    for stored in section.get("cells", []):
        cell = StoppedCell.model_validate(stored)
        cells.append(
            cell.model_copy(update={"ran": ran.get((cell.application, cell.scenario, cell.level))})
        )
    return SequentialRecord(
        run_id=run_id,
        rule=section.get("rule", ""),
        annotated_as=list(section.get("annotated_as", [])),
        cells=cells,
        groups=groups,
    )


def sequential_records(db: Database, run_ids: Iterable[str]) -> list[SequentialRecord]:
    """The records of those of ``run_ids`` that ran sequentially, in the given order."""
    records = (sequential_record(run_id, get_run(db, run_id).summary) for run_id in run_ids)
    return [record for record in records if record is not None]
