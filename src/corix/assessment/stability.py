"""Stability of repeated annotations: consensus, flip rate and when to stop repeating.

An LLM annotator is run several times on the same item because one run can flip. The
runs are summarized, never averaged blindly:

* **Consensus** — the runs settled by a named rule of :mod:`corix.assessment.settling`
  (the one implementation of settling). By default ``median``: for nominal answers
  (yes/no, choices) the most frequent value; for ordinal answers (sliders, severities)
  the *lower median*, so that the consensus is always a value some run actually gave;
  ties broken deterministically toward the smallest value and reported as ties.
  Annotation gates and stores its consensus by ``conservative`` (ties toward risk).
* **Flip rate** of an item — the share of its runs that disagree with its consensus:
  ``(runs − runs equal to the consensus) / runs``. 0 means every run agreed; with two
  values split evenly it is 0.5.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from corix.assessment.settling import SETTLING_RULES, RiskOrder, Value


class Consensus(BaseModel):
    """The summary of one item's repeated runs."""

    model_config = ConfigDict(frozen=True)

    value: Value
    n_runs: int
    n_agreeing: int
    flip_rate: float
    tie: bool
    tied_values: tuple[Value, ...] = ()


class StabilityReport(BaseModel):
    """Consensus per item, and how stable the runs were overall."""

    items: dict[str, Consensus]
    n_items: int
    n_ties: int
    n_unanimous: int
    mean_flip_rate: float | None


def consensus(
    values: Sequence[Value],
    *,
    ordinal: bool = False,
    rule: str = "median",
    order: RiskOrder | None = None,
) -> Consensus:
    """Summarize one item's runs by a settling ``rule`` (see
    :mod:`corix.assessment.settling`), with how many runs agree with the result.

    The default ``median`` rule gives the majority (nominal) or the lower median (ordinal),
    ties to the smallest value; ``order`` (default: by ``ordinal``) says how values compare
    and which carries more risk, for ``conservative``.
    """
    if not values:
        raise ValueError("consensus needs at least one run")
    order = order or RiskOrder(ordinal=ordinal)
    settled = SETTLING_RULES.get(rule).settle(values, order)
    value = settled.value
    same = float if order.ordinal else str
    agreeing = sum(same(v) == same(value) for v in values)
    n = len(values)
    return Consensus(
        value=value,
        n_runs=n,
        n_agreeing=agreeing,
        flip_rate=(n - agreeing) / n,
        tie=settled.tie,
        tied_values=settled.tied_values,
    )


def stability_report(
    runs: Mapping[str, Sequence[Value]], *, ordinal: bool = False
) -> StabilityReport:
    """Consensus and flip rate for every item; items with no runs are left out."""
    items = {
        item_id: consensus(values, ordinal=ordinal)
        for item_id, values in sorted(runs.items())
        if values
    }
    flip_rates = [c.flip_rate for c in items.values()]
    return StabilityReport(
        items=items,
        n_items=len(items),
        n_ties=sum(c.tie for c in items.values()),
        n_unanimous=sum(c.n_agreeing == c.n_runs for c in items.values()),
        mean_flip_rate=statistics.fmean(flip_rates) if flip_rates else None,
    )


def is_settled(
    values: Sequence[Value],
    *,
    min_runs: int,
    max_runs: int,
    agreement: float = 1.0,
    ordinal: bool = False,
) -> bool:
    """Whether an item needs no more runs.

    An item is settled once it has ``max_runs`` runs, or, after at least ``min_runs``:

    * the share of runs equal to the consensus reaches ``agreement`` without a tie
      (with the default 1.0: the runs so far are unanimous), or
    * the remaining runs, whatever they return, can no longer change the consensus that
      ``max_runs`` runs would reach — for nominal values, the leader is ahead of the
      runner-up by more than the runs left; for ordinal values, the median stays put
      even if every remaining run returns the lowest or the highest possible value.
    """
    if not 1 <= min_runs <= max_runs:
        raise ValueError(f"need 1 <= min_runs <= max_runs, got {min_runs} and {max_runs}")
    if not 0.5 < agreement <= 1.0:
        raise ValueError(f"agreement must be in (0.5, 1], got {agreement}")
    n = len(values)
    if n < min_runs:
        return False
    if n >= max_runs:
        return True
    current = consensus(values, ordinal=ordinal)
    if not current.tie and current.n_agreeing / n >= agreement:
        return True
    remaining = max_runs - n
    if ordinal:
        numbers = [float(v) for v in values]  # numbers: consensus above checked them
        lowest = consensus([*numbers, *[-math.inf] * remaining], ordinal=True).value
        highest = consensus([*numbers, *[math.inf] * remaining], ordinal=True).value
        return lowest == highest == current.value
    counts = sorted(Counter(values).values(), reverse=True)
    runner_up = counts[1] if len(counts) > 1 else 0
    return counts[0] > runner_up + remaining
