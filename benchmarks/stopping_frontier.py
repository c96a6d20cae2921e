"""The best any adaptive stopping rule can do against five fixed repeats, computed exactly.

    python benchmarks/stopping_frontier.py --noise 0.1 0.2 0.3 0.4

The judge model is the one of ``bench_adaptive_stability.py`` and of
:func:`corix.assessment.change_probability`: an item has one answer, uniform on a scale of
``k`` values; each run returns it, except a share ``noise`` of runs that return a value
drawn uniformly from the scale. Fixed repeats settle ``max_runs`` runs (by corix's
``conservative`` rule: the median, ties to the riskier value); a stopping rule looks at
each run as it comes and stops after 1 to ``max_runs`` runs, settling those. The item's
labels are *identical* when both settle to the same value.

For a price λ of a label that is not identical, the rule minimizing ``E[calls] + λ·P(not
identical)`` is found by backward induction over every multiset of runs seen (the
posterior depends on no more; :func:`corix.assessment.change_probability` gives the chance
of a change when stopping). It is optimal among all rules, even rules that know the noise
(corix's must measure it). Two consequences, for every target share ``t`` of identical
labels:

* **achievable**: the rules found for the prices tried, and mixtures of two of them (pick
  one at random per item), reach the upper concave hull of their points;
* **a lower bound**: any rule with ``P(identical) >= t`` makes at least
  ``max over λ of V(λ) − λ·(1 − t)`` calls, where ``V(λ)`` is the optimal value (weak
  duality: the optimum is at most the rule's own ``E[calls] + λ·(1 − t)``).

Where the two agree, the figure is the exact optimum.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from corix.assessment import RiskOrder
from corix.assessment.stability import change_probability

ORDINAL = RiskOrder(ordinal=True)

PRICES = tuple(10 ** (i / 40) for i in range(0, 241))
"""The prices λ tried: 1 to 10⁶ calls per label that is not identical."""


@dataclass(frozen=True)
class Outcome:
    """One rule's expected calls per item, chance of an identical label, and value
    ``calls + price·(1 − identical)``."""

    calls: float
    identical: float
    value: float


class JudgeModel:
    """Items on a scale of ``scale_size`` values, a judge of noise ``noise``."""

    def __init__(self, scale_size: int, noise: float, max_runs: int) -> None:
        self.scale = tuple(float(v) for v in range(scale_size))
        self.noise = noise
        self.max_runs = max_runs
        self._likely = 1.0 - noise + noise / scale_size
        self._stray = noise / scale_size
        self._next: dict[tuple[float, ...], tuple[float, ...]] = {}
        self._identical: dict[tuple[float, ...], float] = {}

    def next_run(self, seen: tuple[float, ...]) -> tuple[float, ...]:
        """The probability of each scale value as the next run, given the runs ``seen``."""
        if seen not in self._next:
            posterior = [math.prod(self._p(v, answer) for v in seen) for answer in self.scale]
            total = sum(posterior)
            self._next[seen] = tuple(
                sum(w * self._p(value, a) for a, w in zip(self.scale, posterior, strict=True))
                / total
                for value in self.scale
            )
        return self._next[seen]

    def identical_if_stopped(self, seen: tuple[float, ...]) -> float:
        """The chance that stopping after ``seen`` settles as ``max_runs`` runs would."""
        if seen not in self._identical:
            change = change_probability(
                seen, max_runs=self.max_runs, scale=self.scale, noise=self.noise, order=ORDINAL
            )
            assert change is not None, "a scale this small is always weighed exactly"
            self._identical[seen] = 1.0 - change
        return self._identical[seen]

    def _p(self, value: float, answer: float) -> float:
        return self._likely if value == answer else self._stray


def best_rule(model: JudgeModel, price: float, *, min_runs: int = 1) -> Outcome:
    """The rule minimizing ``E[calls] + price·P(not identical)``, at least ``min_runs`` runs."""
    memo: dict[tuple[float, ...], Outcome] = {}

    def after(seen: tuple[float, ...]) -> Outcome:
        if seen in memo:
            return memo[seen]
        if len(seen) == model.max_runs:
            return Outcome(0.0, 1.0, 0.0)
        calls = identical = value = 0.0
        for run, p in zip(model.scale, model.next_run(seen), strict=True):
            nxt = after(tuple(sorted((*seen, run))))
            calls += p * nxt.calls
            identical += p * nxt.identical
            value += p * nxt.value
        go_on = Outcome(1.0 + calls, identical, 1.0 + value)
        if len(seen) >= max(1, min_runs):
            stay = model.identical_if_stopped(seen)
            stop = Outcome(0.0, stay, price * (1.0 - stay))
            if stop.value <= go_on.value:
                go_on = stop
        memo[seen] = go_on
        return go_on

    return after(())


def mixed(parts: Sequence[tuple[float, Outcome]]) -> Outcome:
    """Items of several kinds in the given shares, each under its own best rule."""
    return Outcome(
        sum(w * o.calls for w, o in parts),
        sum(w * o.identical for w, o in parts),
        sum(w * o.value for w, o in parts),
    )


@dataclass(frozen=True)
class Frontier:
    prices: tuple[float, ...]
    outcomes: tuple[Outcome, ...]
    """The best rule's outcome at each price."""

    def hull(self) -> list[tuple[float, float]]:
        """(calls, identical) of the best rules, on their upper concave hull."""
        points = sorted({(o.calls, o.identical) for o in self.outcomes})
        hull: list[tuple[float, float]] = []
        for point in points:
            while len(hull) >= 2 and _turn(hull[-2], hull[-1], point) >= 0:
                hull.pop()
            hull.append(point)
        return [p for i, p in enumerate(hull) if i == 0 or p[1] > hull[i - 1][1]]

    def calls_reaching(self, target: float) -> tuple[float, float]:
        """The fewest expected calls for ``P(identical) >= target``: (achieved by a mixture
        of two best rules, proven necessary for every rule)."""
        hull = self.hull()
        achieved = math.inf
        if hull[0][1] >= target:
            achieved = hull[0][0]
        for (c1, p1), (c2, p2) in pairwise(hull):
            if p1 <= target <= p2:
                achieved = c1 + (c2 - c1) * (target - p1) / (p2 - p1)
                break
        necessary = max(
            o.value - price * (1.0 - target)
            for price, o in zip(self.prices, self.outcomes, strict=True)
        )
        return achieved, necessary

    def identical_within(self, calls: float) -> tuple[float, float]:
        """The largest ``P(identical)`` within ``calls`` expected calls: (achieved by a
        mixture of two best rules, proven out of reach above it for every rule)."""
        hull = self.hull()
        achieved = max((p for c, p in hull if c <= calls), default=0.0)
        for (c1, p1), (c2, p2) in pairwise(hull):
            if c1 <= calls <= c2:
                achieved = max(achieved, p1 + (p2 - p1) * (calls - c1) / (c2 - c1))
        bound = min(
            1.0 - (o.value - calls) / price
            for price, o in zip(self.prices, self.outcomes, strict=True)
        )
        return achieved, min(1.0, bound)


def _turn(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def frontier(
    kinds: Sequence[tuple[float, int]],
    noise: float,
    *,
    max_runs: int = 5,
    min_runs: int = 1,
    prices: Sequence[float] = PRICES,
) -> Frontier:
    """The frontier for items of scale sizes ``kinds`` (share, scale size)."""
    models = [(share, JudgeModel(size, noise, max_runs)) for share, size in kinds]
    outcomes = tuple(
        mixed([(share, best_rule(model, price, min_runs=min_runs)) for share, model in models])
        for price in prices
    )
    return Frontier(tuple(prices), outcomes)


LLM_HARMS = ((0.75, 8), (0.25, 5))
"""The benchmark's items: three harm packs on a 0–7 scale, one on 1–5."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--noise", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.4])
    parser.add_argument("--target", type=float, default=0.98)
    parser.add_argument("--calls", type=float, default=0.6, help="share of the fixed calls")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    budget = args.calls * args.repeats
    print(
        f"Best stopping rules against {args.repeats} fixed repeats ({LLM_HARMS[0][0]:.0%} of "
        f"items on 8 values, {LLM_HARMS[1][0]:.0%} on 5), as a share of the fixed calls"
    )
    for noise in args.noise:
        for min_runs in (1, 2):
            f = frontier(LLM_HARMS, noise, max_runs=args.repeats, min_runs=min_runs)
            achieved, necessary = f.calls_reaching(args.target)
            best, out_of_reach = f.identical_within(budget)
            print(
                f"  noise {noise:g}, at least {min_runs} run(s): {args.target:.0%} identical "
                f"needs {necessary / args.repeats:.4f}x (reached at "
                f"{achieved / args.repeats:.4f}x); within {args.calls:g}x at most "
                f"{out_of_reach:.2%} identical (reached: {best:.2%})",
                flush=True,
            )


if __name__ == "__main__":
    main()
