"""Settling rules: how one annotator's repeated values for one item become its label.

An LLM annotator is asked several times (passes × repeats) because one answer can flip;
a person may label an item twice. A settling rule turns those values into the label the
measurement uses, and says whether the values tied:

* ``majority`` — the most frequent value (for numbers: the mode); a tie goes to the
  smallest tied value, so the result never depends on the order runs finished.
* ``median`` — numbers: the lower median (a value some run gave); words: as ``majority``.
* ``conservative`` (the default) — as ``median`` for numbers and ``majority`` for words,
  but a tie goes to the value that carries *more risk*. Automated measurement is a lower
  bound on harm; breaking ties toward "no harm" biases even repeat counts downwards.
* ``keep-disagreement`` — nothing is voted away (ARIA's disaggregated practice): every
  value stays a label, and a dialogue's value is their mean.

Which value carries more risk is the item's :class:`RiskOrder`: for a verdict or a
severity the larger number; for a schema answer, the value the violation rule names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from corix.registry import Registry

Value = str | float

__all__ = [
    "DEFAULT_RULE",
    "SETTLING_RULES",
    "RiskOrder",
    "Settled",
    "SettlingRule",
    "natural_order",
]


def natural_order(value: Value) -> tuple[int, float, str]:
    """A total order over mixed values: numbers first, in numeric order, then words."""
    if isinstance(value, str):
        return (1, 0.0, value)
    return (0, float(value), "")


@dataclass(frozen=True)
class RiskOrder:
    """How an item's values are compared: numerically (``ordinal``) and by risk.

    ``risk`` ranks values by the risk they carry (larger = more risk); by default the
    larger number, or for words the natural order.
    """

    ordinal: bool
    risk: Callable[[Value], tuple[int, float, str]] = natural_order


@dataclass(frozen=True)
class Settled:
    """The label(s) settled from one item's values.

    ``values`` holds one label, or every value for ``keep-disagreement``; ``tie`` says the
    values tied and the rule broke the tie, between ``tied_values``; ``n_values`` how many
    values were settled.
    """

    values: tuple[Value, ...]
    tie: bool
    n_values: int
    tied_values: tuple[Value, ...] = ()

    @property
    def value(self) -> Value:
        """The single settled label (the first when disagreement was kept)."""
        return self.values[0]


@dataclass(frozen=True)
class SettlingRule:
    """A named rule: ``settle(values, order)`` → :class:`Settled`."""

    name: str
    description: str
    settle: Callable[[Sequence[Value], RiskOrder], Settled]


# corix.extension_points lists every registry.
SETTLING_RULES: Registry[SettlingRule] = Registry(
    "settling rule", builtins="corix.assessment.plugin"
)
DEFAULT_RULE = "conservative"


def _checked(values: Sequence[Value], order: RiskOrder) -> list[Value]:
    if not values:
        raise ValueError("settling needs at least one value")
    if order.ordinal:
        numbers: list[Value] = []
        for value in values:
            try:
                numbers.append(float(value))
            except ValueError:
                raise ValueError(f"ordinal values must be numbers, got {value!r}") from None
        return numbers
    return list(values)


def _modes(values: list[Value]) -> list[Value]:
    counts = Counter(values)
    top = max(counts.values())
    return sorted((v for v, c in counts.items() if c == top), key=natural_order)


def _middles(values: list[Value]) -> list[Value]:
    ordered = sorted(values, key=natural_order)
    low, high = ordered[(len(ordered) - 1) // 2], ordered[len(ordered) // 2]
    return [low] if low == high else [low, high]


def _settle_by(
    candidates: Callable[[list[Value]], list[Value]],
    pick: Callable[[list[Value], RiskOrder], Value],
) -> Callable[[Sequence[Value], RiskOrder], Settled]:
    def settle(values: Sequence[Value], order: RiskOrder) -> Settled:
        checked = _checked(values, order)
        tied = candidates(checked)
        return Settled(
            values=(pick(tied, order),),
            tie=len(tied) > 1,
            n_values=len(checked),
            tied_values=tuple(tied) if len(tied) > 1 else (),
        )

    return settle


def _smallest(tied: list[Value], order: RiskOrder) -> Value:
    return min(tied, key=natural_order)


def _riskiest(tied: list[Value], order: RiskOrder) -> Value:
    return max(tied, key=order.risk)


def _central(values: list[Value], order: RiskOrder) -> list[Value]:
    return _middles(values) if order.ordinal else _modes(values)


def _keep(values: Sequence[Value], order: RiskOrder) -> Settled:
    checked = sorted(_checked(values, order), key=natural_order)
    return Settled(values=tuple(checked), tie=len(set(checked)) > 1, n_values=len(checked))


BUILTIN_RULES = (
    SettlingRule(
        "majority",
        "the most frequent value; ties go to the smallest value",
        _settle_by(lambda values: _modes(values), _smallest),
    ),
    SettlingRule(
        "median",
        "numbers: the lower median; words: the most frequent value; ties go to the smallest",
        lambda values, order: _settle_by(lambda v: _central(v, order), _smallest)(values, order),
    ),
    SettlingRule(
        "conservative",
        "numbers: the median; words: the most frequent value; ties go to the riskier value",
        lambda values, order: _settle_by(lambda v: _central(v, order), _riskiest)(values, order),
    ),
    SettlingRule(
        "keep-disagreement",
        "every value is kept as a label; a dialogue's value is their mean",
        _keep,
    ),
)
