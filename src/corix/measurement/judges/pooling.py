"""A judge's error learnt over all the cells of a harm, each cell keeping its own.

Cell by cell (:mod:`corix.measurement.judges.corrected_rate`) a rare harm's corrected rate is as
uncertain as the few misses its "no" verdicts hide: 250 labels in a 2% cell see about
one. One judge's sensitivity and specificity are often alike from cell to cell; then the
misses seen in a common harm's cells say something about a rare one's. **Partial
pooling** says how much: each cell has its own rate, sensitivity and specificity, and the
cells' sensitivities are drawn from one Beta (likewise the specificities) whose mean and
concentration are learnt from all the cells (uniform priors on the mean and on the log
concentration over [2, 4096]; a grid draws them). Cells whose labels agree pull each
other close; cells that differ keep apart, so a judge whose error differs by cell is not
corrected with the others' (``benchmarks/bench_label_allocation.py`` checks coverage
with sensitivities 0.7–0.95 across cells).

Pooling everything instead (one sensitivity for all cells, after a likelihood-ratio test
fails to reject it) was tried and rejected: the test cannot see a rare cell's own misses
either, and such intervals covered 0.81 of a 2% cell whose judge missed more
(docs/measurement.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from corix.measurement.judges.corrected_rate import (
    BURN_IN,
    CellCounts,
    CorrectedRate,
    corrected_rate,
    group_seed,
    latent_class_draws,
    thin_note,
)

POOLED_METHOD = (
    "latent-class posterior over all the harm's cells, each cell's sensitivity and "
    "specificity drawn from a Beta learnt across them (partial pooling), median and "
    "equal-tailed credible interval"
)

__all__ = ["POOLED_METHOD", "cell_counts", "corrected_rates", "judge_spread", "partial_draws"]

_MEANS = np.linspace(0.0125, 0.9875, 40)
_CONCENTRATIONS = np.geomspace(2, 4096, 12)
_GRID_M, _GRID_K = (g.ravel() for g in np.meshgrid(_MEANS, _CONCENTRATIONS))
_GRID_A, _GRID_B = _GRID_M * _GRID_K, (1 - _GRID_M) * _GRID_K
# log B(a, b) on the grid, by math.lgamma: SciPy would cost every run its import.
_GRID_NORM = np.array(
    [
        math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        for a, b in zip(_GRID_A, _GRID_B, strict=True)
    ]
)


def corrected_rates(
    groups: Sequence[Mapping[str, str]],
    judged: Sequence[Mapping[str, float]],
    trusted: Mapping[str, float],
    *,
    judge: str,
    reference: str,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[CorrectedRate]:
    """Each cell's corrected rate (``judged[i]``: cell ``groups[i]``'s judged sample),
    partially pooled over the cells (a single cell: :func:`corrected_rate`)."""
    cells = list(zip(groups, judged, strict=True))
    if len(cells) < 2 or resamples <= 0:
        return [
            corrected_rate(
                g,
                j,
                trusted,
                judge=judge,
                reference=reference,
                resamples=resamples,
                seed=seed,
                confidence=confidence,
            )
            for g, j in cells
        ]
    counts = [cell_counts(j, trusted) for j in judged]
    label = {"cells": "/".join(str(sorted(g.items())) for g in groups)}
    draws = partial_draws(counts, resamples, group_seed(seed, label))
    tail = (1 - confidence) / 2
    low, median, high = np.quantile(draws, [tail, 0.5, 1 - tail], axis=0)
    rates = []
    for at, (g, j) in enumerate(cells):
        base = corrected_rate(
            g, j, trusted, judge=judge, reference=reference, resamples=0, confidence=confidence
        )
        update = {
            "corrected_rate": float(median[at]),
            "ci_low": float(low[at]),
            "ci_high": float(high[at]),
            "method": POOLED_METHOD,
            "pooled_cells": len(cells),
            "note": thin_note(counts[at], float(median[at]), reference, pooled_cells=len(cells)),
        }
        rates.append(base.model_copy(update=update))
    return rates


def cell_counts(judged: Mapping[str, float], trusted: Mapping[str, float]) -> CellCounts:
    """One cell's counts: ``judged`` its dialogues' verdicts, ``trusted`` any labels."""
    keys = sorted(judged)
    pairs = [k for k in keys if k in trusted]
    return CellCounts.of(
        np.array([judged[k] >= 0.5 for k in keys], dtype=bool),
        np.array([judged[k] >= 0.5 for k in pairs], dtype=bool),
        np.array([trusted[k] >= 0.5 for k in pairs], dtype=bool),
    )


def partial_draws(cells: Sequence[CellCounts], draws: int, seed: Sequence[int] | int) -> np.ndarray:
    """``draws`` × cells posterior draws of each cell's rate (see the module docstring):
    each cell's sensitivity and specificity drawn given their Beta, and the Beta given
    them."""
    counts = np.array([c.as_tuple() for c in cells])
    return latent_class_draws(counts, draws, seed, priors=(_beta_given, _beta_given))


def judge_spread(
    cells: Sequence[CellCounts], seed: Sequence[int] | int = 0, draws: int = 400
) -> tuple[float, float]:
    """How far apart the cells' sensitivities, and their specificities, are as the pooling
    learns them from these counts: the square root of the posterior mean of the learnt
    Beta's variance. Small where the labels show a judge alike in every cell, large where
    they show it differ or do not show enough (a label plan reads the pooling's
    large-sample model off it)."""
    counts = np.array([c.as_tuple() for c in cells])
    sensitivities, specificities = _RecordedBeta(), _RecordedBeta()
    latent_class_draws(counts, draws, seed, priors=(sensitivities, specificities))
    return sensitivities.spread(), specificities.spread()


class _RecordedBeta:
    """:func:`_beta_given`, remembering each drawn Beta's variance per chain."""

    def __init__(self) -> None:
        self.variances: list[np.ndarray] = []

    def __call__(
        self, rng: np.random.Generator, shares: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        a, b = _beta_given(rng, shares)
        self.variances.append(a * b / ((a + b) ** 2 * (a + b + 1)))
        return a, b

    def spread(self) -> float:
        return math.sqrt(float(np.mean(self.variances[BURN_IN:])))


def _beta_given(rng: np.random.Generator, shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per chain, the Beta's two parameters drawn from the grid given the cells' ``shares``
    (chains × cells)."""
    shares = np.clip(shares, 1e-9, 1 - 1e-9)
    logs, log1s = np.log(shares).sum(1), np.log1p(-shares).sum(1)
    density = (
        np.outer(logs, _GRID_A - 1) + np.outer(log1s, _GRID_B - 1) - shares.shape[1] * _GRID_NORM
    )
    weights = np.exp(density - density.max(axis=1, keepdims=True)).cumsum(axis=1)
    drawn = rng.random(len(weights)) * weights[:, -1]
    pick = np.minimum((weights < drawn[:, None]).sum(axis=1), len(_GRID_A) - 1)
    return _GRID_A[pick][:, None], _GRID_B[pick][:, None]
