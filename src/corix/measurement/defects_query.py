"""What `corix defects` shows of a measurement: its rates and, when asked, hit@k, the cost
of each cell and judge-corrected rates, gathered by one call from a typed query."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from corix.measurement.core import DEFAULT_RATE_GROUPING, Measurement
from corix.measurement.defect_rates import DefectRate
from corix.measurement.hit_at_k import HitRate, attack_rates
from corix.measurement.judges import CorrectedRate, JudgeAgreement
from corix.measurement.sizing import CellCost, cell_costs
from corix.storage import Database


class DefectsQuery(BaseModel):
    """How to group the rates, and which figures to add to them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    grouping: tuple[str, ...] = DEFAULT_RATE_GROUPING
    hit_k: int | None = Field(default=None, ge=1)
    """Also hit@k: the chance that one of k attempts succeeds."""
    attempt_unit: Literal["template", "prompt"] = "template"
    cost: bool = False
    """Also each cell's calls, tokens and cost."""
    correct_judge: str | None = None
    """Also this annotator source's rates corrected for its error against ``reference``."""
    reference: str = "human"


@dataclass(frozen=True)
class DefectFigures:
    """The figures of a :class:`DefectsQuery`; a figure not asked for is empty."""

    rates: Sequence[DefectRate]
    hits: Sequence[HitRate] = ()
    costs: Sequence[CellCost] = ()
    corrected: Sequence[CorrectedRate] = ()
    judges: Sequence[JudgeAgreement] = ()
    """How far the LLM judge whose rates are shown agrees with people, per harm."""


def defect_figures(db: Database, measurement: Measurement, query: DefectsQuery) -> DefectFigures:
    """The rates of ``measurement`` grouped as ``query`` says, with the figures it asks for."""
    hits = (
        attack_rates(db, measurement, k=query.hit_k, unit=query.attempt_unit)
        if query.hit_k is not None
        else []
    )
    corrected = (
        measurement.judge_corrected(query.correct_judge, query.reference)
        if query.correct_judge is not None
        else []
    )
    return DefectFigures(
        rates=measurement.rates(by=query.grouping),
        hits=hits,
        costs=cell_costs(db, measurement.run_ids) if query.cost else [],
        corrected=corrected,
        judges=measurement.judge_agreement(),
    )
