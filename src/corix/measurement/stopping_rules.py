"""When a cell of a sequential run may stop: its confidence sequence is narrow enough, or
its gate decision is settled.

A sequential run adds dialogues to every open cell in waves. After each wave a cell's
values, in the plan's order of work items (fixed before any outcome is seen), give its
confidence sequence (:mod:`corix.measurement.confidence_sequences`); the cell stops at
the first wave after which

* ``width``: the sequence is at most the requested width wide, or
* ``gate``: the sequence lies wholly at or below the harm's gate (it passes) or wholly
  above it (it fails),

or when it has used every dialogue the plan allows (its cap). The sequence is valid at
every wave at once, so looking after each wave does not spend its coverage; the bets are
tuned to the ``horizon`` (by default the dialogues a fixed plan needs for the width at
the worst-case rate, see :func:`corix.measurement.sample_size.n_for_width`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from corix.measurement.confidence_sequences import BETTING_CS, betting_confidence_sequence
from corix.measurement.sample_size import n_for_width

__all__ = ["CellProgress", "StoppingRule", "cell_progress", "parse_until", "stopping_horizon"]


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
        return (
            f"each cell stops when {' or '.join(parts)} (checked after every wave of "
            f"{self.wave} dialogues), or at the plan's count; intervals: {BETTING_CS}, "
            f"{self.confidence:.0%}"
        )


def parse_until(values: Sequence[str], *, wave: int, confidence: float) -> StoppingRule:
    """``--until width=0.1`` and/or ``--until gate`` as a rule; bad input raises ValueError."""
    width: float | None = None
    gate = False
    for value in values:
        name, _, number = value.partition("=")
        if name.strip() == "gate" and not number:
            gate = True
        elif name.strip() == "width" and number:
            try:
                width = float(number)
            except ValueError:
                raise ValueError(f"--until width needs a number, got '{number}'") from None
            if not 0 < width < 1:
                raise ValueError(f"--until width must be between 0 and 1, got {width:g}")
        else:
            raise ValueError(f"--until takes width=W or gate, got '{value}'")
    return StoppingRule(width=width, gate=gate, wave=wave, confidence=confidence)


class CellProgress(BaseModel):
    """Where one cell stands: the dialogues its interval rests on, the interval, and
    why it stopped (``None`` while open)."""

    n: int
    low: float
    high: float
    stopped: str | None


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
    ends = [*range(rule.wave, planned, rule.wave), planned]
    reached = [end for end in ends if end <= ran]
    counts = [sum(1 for p in positions if p < end) for end in reached]
    intervals = betting_confidence_sequence(
        values, 1 - rule.confidence, checkpoints=counts, horizon=rule.horizon
    )
    for end, count, (low, high) in zip(reached, counts, intervals, strict=True):
        reason = _reason(low, high, rule, threshold)
        if reason is None and end == planned:
            reason = "plan's count"
        if reason is not None:
            return CellProgress(n=count, low=low, high=high, stopped=reason)
    low, high = (
        betting_confidence_sequence(values, 1 - rule.confidence, horizon=rule.horizon)[0]
        if values
        else (0.0, 1.0)
    )
    return CellProgress(n=len(values), low=low, high=high, stopped=None)


def _reason(low: float, high: float, rule: StoppingRule, threshold: float | None) -> str | None:
    if rule.width is not None and high - low <= rule.width:
        return "width"
    if rule.gate and threshold is not None:
        if high <= threshold:
            return "gate passes"
        if low > threshold:
            return "gate fails"
    return None
