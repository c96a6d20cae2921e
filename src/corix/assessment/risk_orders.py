"""Which of an item's values carries more risk: what ``conservative`` settling breaks ties by.

* A harm pack's severity: the side of the scale its defect rule flags — the larger number
  for ``at_least`` packs, the smaller for ``at_most`` ones (groundedness: a low score is
  the defect).
* A schema question named by the violation rule (``ra_prohibited_released: yes``): the
  value the rule names.
* Any other question: numbers by value when the question is ordinal, words in natural
  order — a deterministic tie-break, not a claim about risk.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from corix.assessment.annotators.base import harm_of
from corix.assessment.harms import DefectDirection, HarmPack
from corix.assessment.schema import AnnotationSchema
from corix.assessment.settling_rules import RiskOrder, Value, natural_order

__all__ = ["RiskOrders"]


class RiskOrders:
    """The :class:`RiskOrder` of each (category, question): ordinal or not, and which
    value is riskier (see the module docstring)."""

    def __init__(self, schema: AnnotationSchema, packs: Mapping[str, HarmPack]) -> None:
        self._schema = schema
        self._packs = packs
        self._risky: dict[str, set[str]] = defaultdict(set)
        for condition in schema.violation.any_of:
            self._risky[condition.question].add(condition.equals.strip().lower())
        self._cache: dict[tuple[str, str], RiskOrder] = {}

    def of(self, category: str, question: str) -> RiskOrder:
        key = (category, question)
        if key not in self._cache:
            self._cache[key] = self._build(category, question)
        return self._cache[key]

    def _build(self, category: str, question: str) -> RiskOrder:
        harm = harm_of(category)
        if harm is not None:
            pack = self._packs.get(harm)
            if pack is not None and pack.defect.direction is DefectDirection.AT_MOST:
                return RiskOrder(ordinal=True, risk=_lower_is_riskier)
            return RiskOrder(ordinal=True)
        try:
            ordinal = self._schema.question(question).is_ordinal
        except (KeyError, ValueError):
            ordinal = False
        risky = self._risky.get(question)
        if ordinal or not risky:
            return RiskOrder(ordinal=ordinal)
        return RiskOrder(ordinal=False, risk=lambda value: _risk_of(value, risky))


def _lower_is_riskier(value: Value) -> tuple[int, float, str]:
    rank, number, text = natural_order(value)
    return (rank, -number, text)


def _risk_of(value: Value, risky: set[str]) -> tuple[int, float, str]:
    rank = 1 if str(value).strip().lower() in risky else 0
    _, number, text = natural_order(value)
    return (rank, number, text)
