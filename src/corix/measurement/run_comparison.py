"""Two runs side by side: each defect rate and each CoRIx dimension, the change between
them with its interval, and whether their intervals overlap. Both runs are measured under
the same specification, by the measurement core.

The change's interval combines the two runs' own intervals by the method of variance
estimates recovery (MOVER, Zou & Donner 2008): on two Wilson intervals it is Newcombe's
hybrid score interval for a difference of proportions (1998, method 10; method 11 on
continuity-corrected ones); on two bootstrap intervals of tree values it is the same
recovery, so each row's change has an interval whatever its own intervals are."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from corix.measurement.core import Measurement, stored_answers
from corix.measurement.labels import leaves_from_answers
from corix.measurement.trees import dimension_ids, load_tree, score_tree_per_annotator_kind
from corix.storage import Database

__all__ = ["Compared", "compare_measurements", "difference_interval"]


@dataclass(frozen=True)
class Compared:
    """One number in run A and run B; ``None`` where a run has no value."""

    what: str
    a: float | None
    a_interval: tuple[float | None, float | None]
    b: float | None
    b_interval: tuple[float | None, float | None]
    share: bool = True
    """Whether the values are shares (defect rates) rather than tree scores."""

    @property
    def change(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def change_interval(self) -> tuple[float | None, float | None]:
        """The interval of ``b - a``; ``(None, None)`` when either value or interval is
        missing."""
        (a_low, a_high), (b_low, b_high) = self.a_interval, self.b_interval
        if self.a is None or self.b is None or None in (a_low, a_high, b_low, b_high):
            return None, None
        assert a_low is not None and a_high is not None and b_low is not None
        assert b_high is not None  # checked above, for the type checker
        return difference_interval((self.a, a_low, a_high), (self.b, b_low, b_high))

    @property
    def overlap(self) -> bool | None:
        """Whether the two intervals overlap; ``None`` when either is missing."""
        (a_low, a_high), (b_low, b_high) = self.a_interval, self.b_interval
        if None in (a_low, a_high, b_low, b_high):
            return None
        assert a_low is not None and a_high is not None and b_low is not None
        assert b_high is not None  # checked above, for the type checker
        return a_low <= b_high and b_low <= a_high


def compare_measurements(db: Database, a: Measurement, b: Measurement, tree: str) -> list[Compared]:
    """Run A against run B: each defect rate by harm and application, then each dimension
    of ``tree`` per annotator source and application."""
    return [*compare_rates(a, b, ("harm", "application")), *compare_trees(db, a, b, tree)]


def difference_interval(
    a: tuple[float, float, float], b: tuple[float, float, float]
) -> tuple[float, float]:
    """The MOVER interval of ``b - a`` from each estimate and its interval, given as
    ``(estimate, low, high)``; the two estimates must be independent (two runs are)."""
    change = b[0] - a[0]
    below = math.hypot(b[0] - b[1], a[2] - a[0])
    above = math.hypot(b[2] - b[0], a[0] - a[1])
    return change - below, change + above


def compare_rates(a: Measurement, b: Measurement, by: Sequence[str]) -> list[Compared]:
    """Every rate group of either run, matched by its group."""
    rates_a = {_label(r.group): r for r in a.rates(by=by)}
    rates_b = {_label(r.group): r for r in b.rates(by=by)}
    return [
        Compared(
            what,
            rates_a[what].rate if what in rates_a else None,
            (rates_a[what].ci_low, rates_a[what].ci_high) if what in rates_a else (None, None),
            rates_b[what].rate if what in rates_b else None,
            (rates_b[what].ci_low, rates_b[what].ci_high) if what in rates_b else (None, None),
        )
        for what in sorted(rates_a.keys() | rates_b.keys())
    ]


def compare_trees(db: Database, a: Measurement, b: Measurement, tree: str) -> list[Compared]:
    """Each dimension of ``tree`` per annotator source and application, in both runs."""
    spec = load_tree(tree)
    scored = []
    for measurement in (a, b):
        leaves = leaves_from_answers(stored_answers(measurement, db))
        scored.append(
            score_tree_per_annotator_kind(
                spec,
                leaves,
                bootstrap=measurement.spec.spec.bootstrap,
                seed=measurement.spec.spec.seed,
                confidence=measurement.spec.spec.confidence,
            )
        )
    values: list[dict[str, tuple[float | None, float | None, float | None]]] = []
    for by_kind in scored:
        found = {}
        for kind, applications in by_kind.items():
            for application, root in applications.items():
                for dimension in dimension_ids(spec):
                    node = root.find(dimension)
                    if node is not None and not node.empty:
                        label = f"{tree} · {kind} · {application} · {dimension}"
                        found[label] = (node.numeric_value, node.ci_low, node.ci_high)
        values.append(found)
    first, second = values
    none = (None, None, None)
    return [
        Compared(
            what,
            first.get(what, none)[0],
            first.get(what, none)[1:],
            second.get(what, none)[0],
            second.get(what, none)[1:],
            share=False,
        )
        for what in sorted(first.keys() | second.keys())
    ]


def _label(group: dict[str, str]) -> str:
    return " · ".join(group.values())
