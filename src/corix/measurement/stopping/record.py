"""What a sequential run stored about its stopping: the rule and each cell's count.

A run made by :func:`corix.execution.execute_in_waves` keeps a ``sequential`` section in
its summary (written by the decider in :mod:`corix.measurement.waves`). This reads
it back as typed records, so the report and the CLI format the stored numbers rather than
recomputing them, and states the run's saving against two fixed plans: the one sized with
what the run knew after its first wave (each cell's ``fixed_plan``; a group runs the
largest of its cells'), the headline, and the worst-case one (rate 0.5), which is what a
plan sized with no knowledge at all runs.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from corix.domain import RunSummary, SequentialCell
from corix.measurement.stats import n_for_assured_width
from corix.measurement.stopping.rules import StoppingRule
from corix.storage import Database, get_run

__all__ = [
    "FixedPlans",
    "GroupDialogues",
    "SequentialRecord",
    "StoppedCell",
    "sequential_record",
    "sequential_records",
]


class StoppedCell(SequentialCell):
    """One cell (application × scenario × level × harm) at the run's last decision."""

    ran: int | None = None
    """The dialogues its application × scenario × level ran (``n``: those its interval rests on)."""

    def stopped_text(self) -> str:
        """Why it stopped (``open`` while it runs), with what an open gate would need."""
        if self.decision_needs is not None:
            return f"{self.stopped} (a decision needs about {self.decision_needs} dialogues)"
        return self.stopped or "open"


class GroupDialogues(BaseModel):
    """The dialogues one application × scenario × level ran before its cells stopped."""

    application: str
    scenario: str
    level: str
    dialogues: int


class FixedPlans(BaseModel):
    """A sequential run's dialogues beside the fixed plans sized for the same width."""

    dialogues: int
    first_wave: int
    """Σ over groups of the largest fixed plan of its cells at the first wave's rate."""
    worst_case: int
    """Groups × the fixed plan at the worst-case rate 0.5."""

    @property
    def saved_first_wave(self) -> float:
        """The share of dialogues saved against the first-wave plan (negative: more)."""
        return 1 - self.dialogues / self.first_wave

    @property
    def saved_worst_case(self) -> float:
        return 1 - self.dialogues / self.worst_case

    def text(self) -> str:
        """The headline: against the first-wave plan first, the worst case beside it."""
        return (
            f"{self.dialogues} dialogues; a fixed plan sized at the first wave's rates "
            f"(corix plan size --rate) needs {self.first_wave} "
            f"({_saved(self.saved_first_wave)}); the worst-case fixed plan {self.worst_case} "
            f"({_saved(self.saved_worst_case)})"
        )


def _saved(share: float) -> str:
    return f"{share:.0%} fewer" if share >= 0 else f"{-share:.0%} more"


class SequentialRecord(BaseModel):
    """A sequential run's stopping rule and, per cell, the dialogues it used."""

    run_id: str
    rule: str
    annotated_as: list[str]
    cells: list[StoppedCell]
    groups: list[GroupDialogues]
    fixed_plans: FixedPlans | None = None
    """Under a width rule, once every group has run its first wave."""


def sequential_record(run_id: str, summary: RunSummary) -> SequentialRecord | None:
    """The ``sequential`` section of a run's stored summary (``None`` for a fixed run)."""
    section = summary.sequential
    if section is None:
        return None
    groups = []
    for key, count in section.dialogues_per_group.items():
        # Stored as "application/scenario/level"; only an application name may hold "/".
        application, scenario, level = key.rsplit("/", 2)
        groups.append(
            GroupDialogues(application=application, scenario=scenario, level=level, dialogues=count)
        )
    ran = {(g.application, g.scenario, g.level): g.dialogues for g in groups}
    cells = [
        StoppedCell(**cell.model_dump(), ran=ran.get((cell.application, cell.scenario, cell.level)))
        for cell in section.cells
    ]
    rule = StoppingRule.model_validate(section.settings) if section.settings else None
    return SequentialRecord(
        run_id=run_id,
        rule=section.rule,
        annotated_as=list(section.annotated_as),
        cells=cells,
        groups=groups,
        fixed_plans=None if rule is None else _fixed_plans(cells, groups, rule),
    )


def _fixed_plans(
    cells: list[StoppedCell], groups: list[GroupDialogues], rule: StoppingRule
) -> FixedPlans | None:
    planned: dict[tuple[str, str, str], int] = {}
    for cell in cells:
        if cell.fixed_plan is None:
            return None
        key = (cell.application, cell.scenario, cell.level)
        planned[key] = max(planned.get(key, 0), cell.fixed_plan)
    if rule.width is None or not groups or len(planned) != len(groups):
        return None
    return FixedPlans(
        dialogues=sum(g.dialogues for g in groups),
        first_wave=sum(planned.values()),
        worst_case=len(groups) * n_for_assured_width(0.5, rule.width, rule.confidence),
    )


def sequential_records(db: Database, run_ids: Iterable[str]) -> list[SequentialRecord]:
    """The records of those of ``run_ids`` that ran sequentially, in the given order."""
    records = (sequential_record(run_id, get_run(db, run_id).summary) for run_id in run_ids)
    return [record for record in records if record is not None]
