"""Stability of repeated annotations: consensus, flip rate and when to stop repeating.

An LLM annotator is run several times on the same item because one run can flip. The
runs are summarized, never averaged blindly:

* **Consensus** — the runs settled by a named rule of :mod:`corix.assessment.settling_rules`
  (the one implementation of settling). By default ``median``: for nominal answers
  (yes/no, choices) the most frequent value; for ordinal answers (sliders, severities)
  the *lower median*, so that the consensus is always a value some run actually gave;
  ties broken deterministically toward the smallest value and reported as ties.
  Annotation gates and stores its consensus by ``conservative`` (ties toward risk).
* **Flip rate** of an item — the share of its runs that disagree with its consensus:
  ``(runs − runs equal to the consensus) / runs``. 0 means every run agreed; with two
  values split evenly it is 0.5.
* **When to stop repeating** — :func:`change_probability`, a predictive (Bayesian
  curtailment) test: the probability that the runs still to come would settle the item
  differently from the runs so far, under a judge that gives the item's own answer or, on
  a share ``noise`` of runs, a random value of the question's scale. Stopping only when it
  is at most δ bounds, for each stopped item, the chance that all the repeats would have
  settled it otherwise at δ; :func:`is_settled` is the exact, model-free fallback for
  questions without a closed scale (free text). :class:`JudgeNoise` measures the noise
  to assume from the first two runs of items (annotation asks them of a pilot first).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement

from pydantic import BaseModel, ConfigDict

from corix.assessment.settling_rules import DEFAULT_RULE, SETTLING_RULES, RiskOrder, Value


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
    :mod:`corix.assessment.settling_rules`), with how many runs agree with the result.

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


MAX_OUTCOMES = 20_000
"""The most futures :func:`change_probability` weighs (sets of remaining runs × answers)."""


def change_probability(
    values: Sequence[Value],
    *,
    max_runs: int,
    scale: Sequence[Value],
    noise: float,
    order: RiskOrder,
    rule: str = DEFAULT_RULE,
) -> float | None:
    """The probability that ``max_runs`` runs would settle differently from ``values``.

    The judge model: an item has one answer on ``scale``, a priori any of them; each run
    returns it, except a share ``noise`` of runs that return a value drawn uniformly from
    ``scale``. Given the runs so far, the answer's posterior weighs every multiset of the
    runs still to come (exactly, by their multinomial probability); the result is the
    weight of those under which ``rule`` settles all the runs to another value than it
    settles ``values`` to. ``None`` when there are more than :data:`MAX_OUTCOMES` futures
    to weigh, or a value lies off the scale: the caller falls back to :func:`is_settled`.
    """
    if not 0.0 < noise < 1.0:
        raise ValueError(f"noise must be in (0, 1), got {noise}")
    remaining = max_runs - len(values)
    if remaining <= 0:
        return 0.0
    domain = tuple(scale)
    futures = math.comb(remaining + len(domain) - 1, remaining)
    if futures * len(domain) > MAX_OUTCOMES or any(v not in domain for v in values):
        return None
    return _change_probability(
        tuple(sorted(values, key=str)), remaining, domain, noise, order, rule
    )


@lru_cache(maxsize=4096)
def _change_probability(
    values: tuple[Value, ...],
    remaining: int,
    domain: tuple[Value, ...],
    noise: float,
    order: RiskOrder,
    rule: str,
) -> float:
    settle = SETTLING_RULES.get(rule).settle
    now = settle(values, order).value
    stray = noise / len(domain)

    def p(value: Value, answer: Value) -> float:
        return (1.0 - noise) * (value == answer) + stray

    posterior = [math.prod(p(v, answer) for v in values) for answer in domain]
    total = sum(posterior)
    changed = 0.0
    for future in combinations_with_replacement(domain, remaining):
        if settle([*values, *future], order).value == now:
            continue
        ways = math.factorial(remaining) / math.prod(
            math.factorial(n) for n in Counter(future).values()
        )
        changed += ways * sum(
            weight * math.prod(p(v, answer) for v in future)
            for answer, weight in zip(domain, posterior, strict=True)
        )
    return changed / total


@dataclass
class JudgeNoise:
    """The noise of one judge, measured from the first two runs of items.

    Under the judge model of :func:`change_probability` two runs of an item on a scale of
    k values differ with probability ε(2 − ε)(1 − 1/k). The first two runs of the items
    measured are asked whatever they say, so their disagreement is a sample free of the
    stopping rule's selection. :meth:`bound` solves for ε at the 95% Wilson upper bound of
    that share, and returns ``assumed`` until ``min_pairs`` pairs were seen.
    """

    assumed: float
    min_pairs: int = 30
    pairs: int = 0
    differing: int = 0
    expected_share: float = 0.0
    """The sum of (1 − 1/k) over the pairs: their share differing at ε(2 − ε) = 1."""

    def add_pair(self, first: Value, second: Value, scale_size: int) -> None:
        self.pairs += 1
        self.differing += first != second
        self.expected_share += 1.0 - 1.0 / scale_size

    def bound(self) -> float:
        if self.pairs < self.min_pairs:
            return self.assumed
        z = statistics.NormalDist().inv_cdf(0.975)
        n, share = self.pairs, self.differing / self.pairs
        centre = share + z * z / (2 * n)
        spread = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
        upper = (centre + spread) / (1 + z * z / n)
        squared = upper * n / self.expected_share  # ε(2 − ε)
        if squared >= 1.0:
            return 0.99
        return max(1.0 - math.sqrt(1.0 - squared), 0.01)
