"""A plan's sample sizes per cell (application × scenario × level × harm).

Each cell gets the dialogues at which the interval ``corix defects`` reports meets the
width with the requested probability (the assurance) at the assumed rate and testers'
design and, with two or more applications, the dialogues per application that detect a
difference between any two of them with the requested power, times the testers' design
effect (see :mod:`corix.measurement.stats.sample_size`). The family of comparisons is every pair of
applications in every scenario × level × harm of the plan, tested at Holm's strictest
level. Rates, the intra-class correlation and dialogues per tester are given, or read
from an earlier run (``--from RUN``): its cell's rate, and the correlation of verdicts
within a tester (a person, or a persona template for simulated testers).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from pydantic import BaseModel, ConfigDict, Field

from corix.domain import Level, Plan
from corix.measurement.core import Measurement
from corix.measurement.labels import GUARDRAIL_VIOLATION
from corix.measurement.stats import (
    DEFAULT_ASSURANCE,
    design_effect,
    icc_anova,
    n_for_assured_width,
    n_for_difference,
)
from corix.storage import Database, session_attempts

WORST_CASE_RATE = 0.5

__all__ = [
    "CellSize",
    "EarlierRun",
    "SizeRequest",
    "earlier_run",
    "plan_with_sizes",
    "size_plan",
    "width_promise",
]

Cell = tuple[str, str, str, str]
"""(application, scenario, level, harm)."""


class SizeRequest(BaseModel):
    """What the sizes must deliver, and what is assumed (``None``: from an earlier run,
    else the worst case rate 0.5, no correlation, one dialogue per tester)."""

    model_config = ConfigDict(frozen=True)

    width: float | None = Field(default=None, gt=0, lt=1)
    assurance: float = Field(default=DEFAULT_ASSURANCE, gt=0, lt=1)
    difference: float | None = Field(default=None, gt=0, lt=1)
    power: float = Field(default=0.8, gt=0, lt=1)
    alpha: float = Field(default=0.05, gt=0, lt=1)
    confidence: float = Field(default=0.95, gt=0, lt=1)
    rate: float | None = Field(default=None, ge=0, le=1)
    icc: float | None = Field(default=None, ge=0, le=1)
    per_tester: float | None = Field(default=None, ge=1)


class CellSize(BaseModel):
    """The dialogues one cell needs, with what they rest on."""

    application: str
    scenario: str
    level: str
    harm: str
    rate: float
    rate_from: str
    icc: float
    per_tester: float
    design_effect: float
    n_width: int | None
    width_promise: str | None
    n_power: int | None
    comparisons: int
    n: int


@dataclass(frozen=True)
class EarlierRun:
    """What an earlier run says: per-cell rates, the verdicts' intra-class correlation
    within testers and the mean dialogues per tester (``None`` when it cannot say)."""

    run_id: str
    rates: Mapping[Cell, float]
    icc: float | None
    per_tester: float | None


def earlier_run(db: Database, measurement: Measurement) -> EarlierRun:
    """Rates per cell and the testers' clustering of ``measurement`` (one run)."""
    rates = {
        (r.group["application"], r.group["scenario"], r.group["level"], r.group["harm"]): r.rate
        for r in measurement.rates(by=("harm", "application", "scenario", "level"))
        if r.rate is not None
    }
    values = {
        session: statistics.fmean(by_source.values())
        for session, by_source in measurement.dialogue_verdicts(GUARDRAIL_VIOLATION).items()
    }
    attempts = session_attempts(db, list(values))
    clusters: defaultdict[str, list[float]] = defaultdict(list)
    for dialogue in measurement.dialogues:
        if dialogue.session_id not in values:
            continue
        if dialogue.tester_id is not None:
            tester = f"tester {dialogue.tester_id}"
        elif dialogue.session_id in attempts:
            tester = f"template {attempts[dialogue.session_id].template}"
        else:
            continue
        clusters[f"{dialogue.application}/{tester}"].append(values[dialogue.session_id])
    groups = list(clusters.values())
    usable = len(groups) >= 2 and any(len(g) > 1 for g in groups)
    return EarlierRun(
        run_id=measurement.run_ids[0],
        rates={cell: rate for cell, rate in rates.items() if rate is not None},
        icc=icc_anova(groups) if usable else None,
        per_tester=statistics.fmean(len(g) for g in groups) if usable else None,
    )


def size_plan(
    plan: Plan, request: SizeRequest, earlier: EarlierRun | None = None
) -> list[CellSize]:
    """The dialogues each cell of ``plan`` needs for ``request``."""
    if request.width is None and request.difference is None:
        raise ValueError("ask for an interval width, a difference to detect, or both")
    harms = [GUARDRAIL_VIOLATION, *sorted(h for h in plan.gates if h != GUARDRAIL_VIOLATION)]
    apps = [a.name for a in plan.applications]
    levels = [level.value for level in plan.levels]
    pairs = len(list(combinations(apps, 2)))
    comparisons = pairs * len(plan.scenarios) * len(levels) * len(harms)
    icc = _pick(request.icc, earlier.icc if earlier else None, 0.0)
    per_tester = _pick(request.per_tester, earlier.per_tester if earlier else None, 1.0)
    deff = design_effect(per_tester, icc)
    cells = []
    for app in apps:
        for scenario in plan.scenarios:
            for level in levels:
                for harm in harms:
                    rate, source = _rate((app, scenario, level, harm), request, earlier)
                    n_width = (
                        n_for_assured_width(
                            rate,
                            request.width,
                            request.confidence,
                            assurance=request.assurance,
                            per_tester=max(1, round(per_tester)),
                            icc=icc,
                        )
                        if request.width is not None
                        else None
                    )
                    n_power = (
                        n_for_difference(
                            rate,
                            request.difference,
                            power=request.power,
                            alpha=request.alpha,
                            comparisons=comparisons,
                            deff=deff,
                        )
                        if request.difference is not None and pairs
                        else None
                    )
                    cells.append(
                        CellSize(
                            application=app,
                            scenario=scenario,
                            level=level,
                            harm=harm,
                            rate=rate,
                            rate_from=source,
                            icc=icc,
                            per_tester=per_tester,
                            design_effect=deff,
                            n_width=n_width,
                            width_promise=(
                                None
                                if request.width is None
                                else width_promise(request, rate, per_tester, icc)
                            ),
                            n_power=n_power,
                            comparisons=comparisons if n_power is not None else 0,
                            n=max(n for n in (n_width, n_power, 1) if n is not None),
                        )
                    )
    return cells


def width_promise(request: SizeRequest, rate: float, per_tester: float, icc: float) -> str:
    """What ``n_width`` promises, in words: which interval, how wide, how often, if what."""
    m = max(1, round(per_tester))
    interval = (
        "continuity-corrected Wilson"
        if m == 1
        else f"cluster interval over testers ({m} dialogues each, ICC {icc:.3f})"
    )
    return (
        f"{request.confidence:.0%} {interval} width ≤ {request.width:g} "
        f"in at least {request.assurance:.0%} of runs if the rate is {rate:.1%}"
    )


def _pick(given: float | None, measured: float | None, default: float) -> float:
    return given if given is not None else measured if measured is not None else default


def _rate(cell: Cell, request: SizeRequest, earlier: EarlierRun | None) -> tuple[float, str]:
    if request.rate is not None:
        return request.rate, "assumed"
    if earlier is not None and cell in earlier.rates:
        return earlier.rates[cell], f"run {earlier.run_id}"
    return WORST_CASE_RATE, "worst case"


def plan_with_sizes(plan: Plan, cells: Sequence[CellSize], model_tests: Mapping[str, int]) -> Plan:
    """``plan`` with each level's counts set to its largest cell's need: ``sessions`` for
    simulated levels; for model testing, ``repeats`` of the scenario's ``model_tests``
    scripted tests (the most any scenario needs)."""
    need: dict[str, int] = {}
    for cell in cells:
        if cell.level == Level.MODEL_TESTING.value:
            tests = max(1, model_tests.get(cell.scenario, 1))
            count = math.ceil(cell.n / tests)
        else:
            count = cell.n
        need[cell.level] = max(need.get(cell.level, 0), count)
    levels = {}
    for level, settings in plan.levels.items():
        if level.value not in need:
            levels[level] = settings
        elif level is Level.MODEL_TESTING:
            levels[level] = settings.model_copy(update={"repeats": need[level.value]})
        else:
            levels[level] = settings.model_copy(update={"sessions": need[level.value]})
    return plan.model_copy(update={"levels": levels})
