"""Closed intervals: a tree's scale and the codomain (range of possible values) of a node."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Interval:
    """``[low, high]``; ``high`` may be infinite (e.g. a count has no upper bound)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if math.isnan(self.low) or math.isnan(self.high) or self.low > self.high:
            raise ValueError(f"not an interval: [{self.low}, {self.high}]")

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int | float) and self.low <= value <= self.high

    @property
    def width(self) -> float:
        return self.high - self.low

    @staticmethod
    def hull(intervals: Iterable[Interval]) -> Interval | None:
        """The smallest interval holding all ``intervals``; ``None`` when there are none."""
        items = list(intervals)
        if not items:
            return None
        return Interval(min(i.low for i in items), max(i.high for i in items))
