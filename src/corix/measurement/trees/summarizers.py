"""Summarizers: how a CoRIx node turns its children's values (or its responses) into one.

A summarizer sees a :class:`Sample` for every unit (application) and every bootstrap
replicate at once, so one NumPy call scores them all. A plugin registers its own
(see :mod:`corix.registry`) with::

    class P90(NumericSummarizer):
        def summarize(self, sample: Sample) -> FloatArray:
            ...

    def register(plugin: Plugin) -> None:
        plugin.add(SUMMARIZERS, "p90", P90)

Parameters are pydantic fields (``share_above`` has ``threshold``); a tree passes them
under ``params`` and they are validated when the tree is loaded.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from corix.measurement.stats import FloatArray
from corix.measurement.trees.intervals import Interval
from corix.registry import Registry


@dataclass(frozen=True)
class Sample:
    """The items one node summarizes, for all units and replicates.

    The last axis holds the items: a question node's distinct response values, or an inner
    node's children. ``multiplicity`` (shape ``units × replicates × items``) says how often
    each item occurs: a response count, or 1 for a child with a value and 0 for an empty
    child. ``values`` broadcasts against it; absent items hold 0, never NaN. ``weights``
    are the edge weights (1 for responses). ``codomain`` bounds the items' values.
    """

    values: FloatArray
    multiplicity: FloatArray
    weights: FloatArray
    codomain: Interval
    scale: Interval

    @property
    def total(self) -> FloatArray:
        """How many items are present, per unit and replicate."""
        total: FloatArray = self.multiplicity.sum(axis=-1)
        return total


def ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """``numerator / denominator`` with NaN (an empty summary) where the denominator is 0."""
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def weighted_median(values: FloatArray, multiplicity: FloatArray) -> FloatArray:
    """The median of the multiset where each value occurs ``multiplicity`` times.

    With an even count it is the mean of the two middle values, as ``numpy.median``.
    Fractional multiplicities weigh their values: a value with multiplicity ½ covers half
    a position.
    """
    values = np.broadcast_to(values, multiplicity.shape)
    order = np.argsort(np.where(multiplicity > 0, values, np.inf), axis=-1, kind="stable")
    sorted_values = np.take_along_axis(values, order, axis=-1)
    cumulative = np.cumsum(np.take_along_axis(multiplicity, order, axis=-1), axis=-1)
    # Multiplicities may be fractions (a dialogue's annotators share its weight) whose sum
    # is a whole number up to rounding: round so the middle positions come out right.
    cumulative = np.round(cumulative, 9)
    total = cumulative[..., -1:]
    # 0-based positions of the lower and upper middle items.
    lower = np.argmax(cumulative > np.floor((total - 1) / 2), axis=-1)[..., None]
    upper = np.argmax(cumulative > np.floor(total / 2), axis=-1)[..., None]
    middle = (
        np.take_along_axis(sorted_values, lower, axis=-1)
        + np.take_along_axis(sorted_values, upper, axis=-1)
    ) / 2
    return np.where(total > 0, middle, np.nan)[..., 0]


class Summarizer(BaseModel, ABC):
    """Base of every summarizer; fields are its parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @abstractmethod
    def codomain(self, children: Interval, scale: Interval) -> Interval | None:
        """The values this node can take, given its children's; ``None`` if not numeric."""


class Aggregation(Summarizer):
    """Keeps the children's values side by side (a tuple), e.g. the root's dimensions."""

    def codomain(self, children: Interval, scale: Interval) -> None:
        return None


class NumericSummarizer(Summarizer):
    """A summarizer whose value is one number (NaN when nothing is present).

    ``uses_weights`` says whether edge weights change the value; a tree giving a weight
    other than 1 to a node whose summarizer ignores weights is refused when compiled.
    """

    uses_weights: ClassVar[bool] = False

    @abstractmethod
    def summarize(self, sample: Sample) -> FloatArray:
        """One value per unit and replicate: shape ``multiplicity.shape[:-1]``."""

    def codomain(self, children: Interval, scale: Interval) -> Interval:
        return children


# corix.extension_points lists every registry.
SUMMARIZERS: Registry[type[Summarizer]] = Registry(
    "summarizer", builtins="corix.measurement.plugin"
)


class Mean(NumericSummarizer):
    """Mean of the present items weighted by the edge weights (all 1 unless a tree says
    otherwise); empty when every present item weighs 0. ``weighted_mean`` is the same."""

    uses_weights: ClassVar[bool] = True

    def summarize(self, sample: Sample) -> FloatArray:
        weight = sample.multiplicity * sample.weights
        return ratio((weight * sample.values).sum(axis=-1), weight.sum(axis=-1))


class Median(NumericSummarizer):
    def summarize(self, sample: Sample) -> FloatArray:
        return weighted_median(sample.values, sample.multiplicity)


class ScaleNormalizedMedian(NumericSummarizer):
    """Median ÷ the maximum of the items' codomain, rescaled to the tree's scale.

    Puts items with different ranges (e.g. a choice table topping out at 5) on one scale.
    """

    def summarize(self, sample: Sample) -> FloatArray:
        median = weighted_median(sample.values, sample.multiplicity)
        return median / sample.codomain.high * sample.scale.high

    def codomain(self, children: Interval, scale: Interval) -> Interval:
        if not (math.isfinite(children.high) and children.high > 0):
            raise ValueError(
                "scale_normalized_median needs items whose maximum possible value is "
                f"positive and finite; theirs is {children.high:g}"
            )
        return scale


class Max(NumericSummarizer):
    def summarize(self, sample: Sample) -> FloatArray:
        present = np.where(sample.multiplicity > 0, sample.values, -np.inf).max(axis=-1)
        return np.where(np.isneginf(present), np.nan, present)


class Min(NumericSummarizer):
    def summarize(self, sample: Sample) -> FloatArray:
        present = np.where(sample.multiplicity > 0, sample.values, np.inf).min(axis=-1)
        return np.where(np.isposinf(present), np.nan, present)


class Count(NumericSummarizer):
    """How many items are present (responses, or children with a value)."""

    def summarize(self, sample: Sample) -> FloatArray:
        total = sample.total
        return np.where(total > 0, total, np.nan)

    def codomain(self, children: Interval, scale: Interval) -> Interval:
        return Interval(0.0, math.inf)


class ShareAbove(NumericSummarizer):
    """Share (0–1) of the present items whose value is strictly above ``threshold``."""

    threshold: float

    def summarize(self, sample: Sample) -> FloatArray:
        above = (sample.multiplicity * (sample.values > self.threshold)).sum(axis=-1)
        return ratio(above, sample.total)

    def codomain(self, children: Interval, scale: Interval) -> Interval:
        return Interval(0.0, 1.0)


BUILTIN_SUMMARIZERS: dict[str, type[Summarizer]] = {
    "aggregation": Aggregation,
    "mean": Mean,
    "weighted_mean": Mean,
    "median": Median,
    "scale_normalized_median": ScaleNormalizedMedian,
    "max": Max,
    "min": Min,
    "count": Count,
    "share_above": ShareAbove,
}
