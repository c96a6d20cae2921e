"""When a cell of a sequential run may stop: its confidence sequence is narrow enough, or
its gate decision is settled.

A sequential run adds dialogues to every open cell in waves. After each wave a cell's
values, in the plan's order of work items (fixed before any outcome is seen), give its
confidence sequence (:mod:`corix.measurement.stopping.confidence_sequences`); the cell stops at
the first wave after which

* ``width``: its interval is at most the requested width wide, or
* ``gate``: the sequence lies wholly at or below the harm's gate (it passes) or wholly
  above it (it fails),

or when it has used every dialogue the plan allows, or the rule's ``cap`` (then a gate
still open is *undecided at this precision*, with about how many dialogues a decision
would need). Under the width alone the interval is the one ``corix defects`` reports,
read after every wave (:mod:`corix.measurement.stopping.width_rule`: its coverage at the stop is
computed exactly); with the gate, or values that are not 0/1, it is the sequence, valid
at every wave at once, whose bets are tuned to the ``horizon`` (by default the
dialogues a fixed plan needs for the width at the worst-case rate, see
:func:`corix.measurement.stats.sample_size.n_for_width`).

Every cell also records the fixed plan sized with what the run knew after its first
wave: ``corix plan size --rate P --width W`` at that wave's rate, the comparison a
sequential run's saving is stated against.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from corix.measurement.stats import n_for_assured_width, n_for_width
from corix.measurement.stopping.confidence_sequences import BETTING_CS, betting_confidence_sequence
from corix.measurement.stopping.width_rule import WIDTH_INTERVAL, stopped_interval

__all__ = [
    "UNDECIDED",
    "CellProgress",
    "StoppingRule",
    "cell_progress",
    "parse_until",
    "stopping_horizon",
]

UNDECIDED = "undecided at this precision"


def stopping_horizon(width: float, confidence: float) -> int:
    """The dialogues a fixed plan needs for ``width`` at the worst-case rate: where the
    bets are tuned, so the sequence is tightest where a cell would otherwise stop."""
    return n_for_width(0.5, width, confidence)


class StoppingRule(BaseModel):
    """What stops a cell, how many dialogues a wave adds to it, and the coverage."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    width: float | None = Field(default=None, gt=0, lt=1)
    gate: bool = False
    wave: int = Field(default=10, ge=1)
    confidence: float = Field(default=0.95, gt=0, lt=1)
    horizon: int | None = Field(default=None, ge=1)
    cap: int | None = Field(default=None, ge=1)
    """Dialogues per cell at most (below the plan's count); ``None``: the plan's count."""
    width_interval: Literal["sequence", "wilson"] = "sequence"
    """What the width reads: the confidence sequence, or (width alone, 0/1 values) the
    corrected Wilson interval at each wave. Runs stored before it existed used the
    sequence."""

    @model_validator(mode="after")
    def _something_stops(self) -> StoppingRule:
        if self.width is None and not self.gate:
            raise ValueError("a stopping rule needs a width, the gate, or both")
        return self

    def text(self) -> str:
        parts = []
        if self.width is not None:
            parts.append(f"interval width ≤ {self.width:g}")
        if self.gate:
            parts.append("gate decision settled")
        cap = "the plan's count" if self.cap is None else f"{self.cap} dialogues"
        undecided = f" (an open gate: {UNDECIDED})" if self.gate else ""
        interval = WIDTH_INTERVAL if self.width_interval == "wilson" else BETTING_CS
        return (
            f"each cell stops when {' or '.join(parts)} (checked after every wave of "
            f"{self.wave} dialogues), or at {cap}{undecided}; intervals: {interval}, "
            f"{self.confidence:.0%}"
        )


def parse_until(values: Sequence[str], *, wave: int, confidence: float) -> StoppingRule:
    """``--until width=0.1``, ``--until gate`` and ``--until cap=N`` as a rule; bad input
    raises ValueError. The width alone reads the reported (corrected Wilson) interval."""
    width: float | None = None
    gate = False
    cap: int | None = None
    for value in values:
        name, _, number = value.partition("=")
        if name.strip() == "gate" and not number:
            gate = True
        elif name.strip() == "cap" and number:
            if not number.strip().isdigit() or int(number) < 1:
                raise ValueError(f"--until cap needs a whole number of dialogues, got '{number}'")
            cap = int(number)
        elif name.strip() == "width" and number:
            try:
                width = float(number)
            except ValueError:
                raise ValueError(f"--until width needs a number, got '{number}'") from None
            if not 0 < width < 1:
                raise ValueError(f"--until width must be between 0 and 1, got {width:g}")
        else:
            raise ValueError(f"--until takes width=W or gate, got '{value}'")
    if width is None and not gate:
        raise ValueError("--until needs width=W or gate (cap=N only bounds them)")
    interval: Literal["sequence", "wilson"] = (
        "wilson" if width is not None and not gate else "sequence"
    )
    return StoppingRule(
        width=width, gate=gate, wave=wave, confidence=confidence, cap=cap, width_interval=interval
    )


class CellProgress(BaseModel):
    """Where one cell stands: the dialogues its interval rests on, the interval, and
    why it stopped (``None`` while open)."""

    n: int
    low: float
    high: float
    stopped: str | None
    interval: str = BETTING_CS
    first_wave_rate: float | None = None
    """The rate after the first wave (``None`` before it, or without a width)."""
    fixed_plan: int | None = None
    """The dialogues ``corix plan size --rate first_wave_rate --width W`` gives: the
    fixed plan sized with what the run knew after its first wave."""
    decision_needs: int | None = None
    """For a gate left undecided: about how many dialogues a decision would need, if the
    rate stays at its estimate and the interval narrows as 1/√n (``None``: the estimate
    sits on the gate, no number of dialogues is enough to expect a decision)."""


def cell_progress(
    values: Sequence[float],
    positions: Sequence[int],
    rule: StoppingRule,
    *,
    ran: int,
    planned: int,
    threshold: float | None,
) -> CellProgress:
    """Replay the rule over a cell's ``values`` (at ``positions`` among its ``planned``
    work items, ascending; the first ``ran`` items have run) wave by wave; the cell stops
    at the first wave that meets it."""
    cap = planned if rule.cap is None else min(planned, rule.cap)
    ends = [*range(rule.wave, cap, rule.wave), cap]
    reached = [end for end in ends if end <= ran]
    counts = [sum(1 for p in positions if p < end) for end in reached]
    wilson = rule.width_interval == "wilson" and not rule.gate and _binary(values)
    read = _intervals(values, counts, rule, wilson=wilson)
    first_rate, fixed_plan = _first_wave(values, counts, rule)

    def progress(
        n: int, low: float, high: float, stopped: str | None, needs: int | None = None
    ) -> CellProgress:
        return CellProgress(
            n=n,
            low=low,
            high=high,
            stopped=stopped,
            interval=WIDTH_INTERVAL if wilson else BETTING_CS,
            first_wave_rate=first_rate,
            fixed_plan=fixed_plan,
            decision_needs=needs,
        )

    for end, count, (low, high) in zip(reached, counts, read, strict=True):
        reason = _reason(low, high, rule, threshold)
        needs = None
        if reason is None and end == cap:
            if rule.gate and threshold is not None:
                reason = UNDECIDED
                needs = _decision_needs(values[:count], low, high, threshold) if count else None
            else:
                reason = "plan's count" if cap == planned else "cap"
        if reason is not None:
            return progress(count, low, high, reason, needs)
    low, high = _intervals(values, [len(values)], rule, wilson=wilson)[0]
    return progress(len(values), low, high, None)


def _binary(values: Sequence[float]) -> bool:
    return all(value in (0.0, 1.0) for value in values)


def _intervals(
    values: Sequence[float], counts: Sequence[int], rule: StoppingRule, *, wilson: bool
) -> list[tuple[float, float]]:
    if wilson:
        return [stopped_interval(sum(values[:c]), c, rule.confidence) for c in counts]
    if not values:
        return [(0.0, 1.0)] * len(counts)
    return betting_confidence_sequence(
        values, 1 - rule.confidence, checkpoints=counts, horizon=rule.horizon
    )


def _first_wave(
    values: Sequence[float], counts: Sequence[int], rule: StoppingRule
) -> tuple[float | None, int | None]:
    """The first wave's rate and the fixed plan sized at it (width rules only)."""
    if rule.width is None or not counts or counts[0] == 0:
        return None, None
    rate = statistics.fmean(values[: counts[0]])
    # What `corix plan size --rate RATE --width W` gives: the interval corix reports at
    # most W wide in at least 80% of runs.
    return rate, n_for_assured_width(rate, rule.width, rule.confidence)


def _decision_needs(
    values: Sequence[float], low: float, high: float, threshold: float
) -> int | None:
    """Dialogues for the interval's half-width to shrink below the estimate's distance to
    the gate, if it narrows as 1/√n."""
    gap = abs(statistics.fmean(values) - threshold)
    if gap == 0:
        return None
    return math.ceil(len(values) * ((high - low) / 2 / gap) ** 2)


def _reason(low: float, high: float, rule: StoppingRule, threshold: float | None) -> str | None:
    if rule.width is not None and high - low <= rule.width:
        return "width"
    if rule.gate and threshold is not None:
        if high <= threshold:
            return "gate passes"
        if low > threshold:
            return "gate fails"
    return None
