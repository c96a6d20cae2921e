"""Stability of repeated annotations: consensus, flip rate and when to stop repeating.

An LLM annotator is run several times on the same item because one run can flip. The
runs are summarized, never averaged blindly:

* **Consensus** — for nominal answers (yes/no, choices) the most frequent value; for
  ordinal answers (sliders, severities) the *lower median*, so that the consensus is
  always a value some run actually gave. Ties (two nominal values equally frequent, or
  an even number of ordinal runs whose two middle values differ) are broken
  deterministically — the smallest tied value in sort order wins, so the result does not
  depend on the order in which runs finished — and are reported as ties.
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

Value = str | float


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


def _sort_key(value: Value) -> tuple[int, float, str]:
    # Numbers before text, each in natural order; gives a total order over mixed values.
    if isinstance(value, str):
        return (1, 0.0, value)
    return (0, float(value), "")


def _as_numbers(values: Sequence[Value]) -> list[float]:
    numbers: list[float] = []
    for value in values:
        if isinstance(value, str | bool):
            raise ValueError(f"ordinal values must be numbers, got {value!r}")
        numbers.append(float(value))
    return numbers


def consensus(values: Sequence[Value], *, ordinal: bool = False) -> Consensus:
    """Summarize one item's runs: majority (nominal) or lower median (ordinal)."""
    if not values:
        raise ValueError("consensus needs at least one run")
    if ordinal:
        ordered = sorted(_as_numbers(values))
        middle_low = ordered[(len(ordered) - 1) // 2]
        middle_high = ordered[len(ordered) // 2]
        value: Value = middle_low
        tied: tuple[Value, ...] = (middle_low, middle_high) if middle_low != middle_high else ()
        agreeing = ordered.count(middle_low)
    else:
        counts = Counter(values)
        top = max(counts.values())
        tied = tuple(sorted((v for v, c in counts.items() if c == top), key=_sort_key))
        value = tied[0]
        agreeing = top
        tied = tied if len(tied) > 1 else ()
    n = len(values)
    return Consensus(
        value=value,
        n_runs=n,
        n_agreeing=agreeing,
        flip_rate=(n - agreeing) / n,
        tie=bool(tied),
        tied_values=tied,
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
        numbers = _as_numbers(values)
        lowest = consensus([*numbers, *[-math.inf] * remaining], ordinal=True).value
        highest = consensus([*numbers, *[math.inf] * remaining], ordinal=True).value
        return lowest == highest == current.value
    counts = sorted(Counter(values).values(), reverse=True)
    runner_up = counts[1] if len(counts) > 1 else 0
    return counts[0] > runner_up + remaining
