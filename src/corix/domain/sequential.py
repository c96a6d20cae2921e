"""What a run made in waves stores about its stopping: the rule, each cell, each group.

The decider (``corix.measurement.waves``) makes a :class:`WaveReport` after every
wave; the waves loop (``corix.execution.waves``) keeps the last one in the run summary's
:class:`SequentialSummary`, beside the rule's settings and each group's dialogues; the
report and the CLI read it back through ``corix.measurement.stopping.record``.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from corix.domain.json_values import JsonObject


class SequentialCell(BaseModel):
    """One cell (application × scenario × level × harm) at a wave's decision."""

    application: str
    scenario: str
    level: str
    harm: str
    gate: float | None = None
    n: int
    """The dialogues its interval rests on."""
    low: float
    high: float
    stopped: str | None
    """Why it stopped; ``None`` while it is open."""
    interval: str | None = None
    first_wave_rate: float | None = None
    fixed_plan: int | None = None
    """The fixed plan sized at the first wave's rate (``corix plan size --rate``)."""
    decision_needs: int | None = None
    """For a gate undecided at its cap: about how many dialogues a decision would need."""


class WaveReport(BaseModel):
    """What a wave's decision says about the cells: the rule, who labelled, each cell."""

    rule: str
    annotated_as: list[str]
    cells: list[SequentialCell]


class SequentialSummary(BaseModel):
    """A run summary's ``sequential`` section, kept from the first wave on so that a
    resumed run goes on under the same rule and annotators."""

    rule: str = ""
    settings: JsonObject | None = None
    """The stopping rule's fields, validated by ``corix.measurement``'s ``StoppingRule``
    (the layer that owns the rule) when a resume or the report reads them."""
    annotators: list[str] = Field(default_factory=list)
    """The annotators asked to label each wave."""
    annotated_as: list[str] = Field(default_factory=list)
    """The names their passes are stored under."""
    cells: list[SequentialCell] = Field(default_factory=list)
    dialogues_per_group: dict[str, int] = Field(default_factory=dict)
    """``application/scenario/level`` → the dialogues the group ran (only an application
    name may hold ``/``)."""

    def after(self, report: WaveReport) -> SequentialSummary:
        """This section with a wave's decision in it."""
        return self.model_copy(
            update={"rule": report.rule, "annotated_as": report.annotated_as, "cells": report.cells}
        )
