"""Stopping at a width: the reported interval read after every wave, and its exact coverage.

``corix run --until width=W`` (without ``--until gate``) stops a cell at the first wave
after which the interval ``corix defects`` reports — Wilson's score interval with
continuity correction (:func:`corix.measurement.defect_rates.wilson_cc_bounds`) — is at
most ``W`` wide. This is a fixed-width sequential interval in the sense of Chow & Robbins
(1965, Ann. Math. Stat. 36:457): the run stops on the interval's *width*, which depends
on the data only through the spread ``p̂(1 − p̂)``, not on where the interval lies, so
reading it after every wave costs little coverage — unlike a rule that stops when an
interval excludes a value (a gate), which needs a confidence sequence.

How little is computed exactly, not assumed: for 0/1 values the count of defects after
each wave is a Markov chain, so the chance of stopping at every (wave, count) follows by
convolving Binomial(wave, p) steps, and the coverage of the interval reported at the stop
is a finite sum (:func:`width_rule_coverage`; no simulation). At waves of 20 and a width
of 0.1 it is at least 0.950 at every rate on a grid of 2,000 (docs/benchmarks.md).
Values that are not 0/1 (several annotators averaged) are read with the confidence
sequence instead, whose coverage holds whatever the values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from corix.measurement.stats import wilson_cc_bounds

__all__ = ["WIDTH_INTERVAL", "WidthRuleCoverage", "stopped_interval", "width_rule_coverage"]

WIDTH_INTERVAL = "corrected Wilson read after every wave (exact coverage under this rule)"


def stopped_interval(defects: float, n: int, confidence: float) -> tuple[float, float]:
    """The interval the width rule reads after ``n`` dialogues (``(0, 1)`` before any)."""
    if n == 0:
        return 0.0, 1.0
    return wilson_cc_bounds(defects / n, n, confidence)


@dataclass(frozen=True)
class WidthRuleCoverage:
    """The exact coverage of the interval at the stop and the expected dialogues used."""

    rate: float
    coverage: float
    expected_n: float
    width_met: float
    """The chance the cell stops on the width (not at the cap)."""
    mean_estimate: float
    """The expected rate at the stop (minus ``rate``: the bias stopping adds)."""


def width_rule_coverage(
    rates: np.ndarray | list[float], width: float, wave: int, cap: int, confidence: float = 0.95
) -> list[WidthRuleCoverage]:
    """Exact coverage of the width rule at each true rate: stop after the first wave whose
    interval is at most ``width`` wide, or at ``cap`` dialogues (0/1 values)."""
    from scipy.stats import binom

    ends = [*range(wave, cap, wave), cap]
    bounds = {
        end: np.array([stopped_interval(x, end, confidence) for x in range(end + 1)])
        for end in ends
    }
    found = []
    for rate in np.asarray(rates, dtype=float):
        alive = np.ones(1)  # P(count = x and not yet stopped), x = 0 … dialogues so far
        covered = used = met = estimate = 0.0
        previous = 0
        for end in ends:
            step = end - previous
            alive = np.convolve(alive, binom.pmf(np.arange(step + 1), step, rate))
            previous = end
            low, high = bounds[end][:, 0], bounds[end][:, 1]
            narrow = high - low <= width
            stop = np.ones_like(narrow) if end == cap else narrow
            holds = (low <= rate) & (rate <= high)
            covered += float(alive[stop] @ holds[stop])
            used += end * float(alive[stop].sum())
            met += float(alive[stop & narrow].sum())
            estimate += float(alive[stop] @ (np.flatnonzero(stop) / end))
            alive = np.where(stop, 0.0, alive)
        found.append(WidthRuleCoverage(float(rate), covered, used, met, estimate))
    return found
