"""One judge's error shared by the cells of a harm, when the labels do not say otherwise.

Cell by cell (:mod:`corix.measurement.judge_error`) a rare harm's corrected rate is as
uncertain as the few misses its "no" verdicts hide: 250 labels in a 2% cell see about
one. The judge's **sensitivity and specificity are often one judge's, whatever the cell**;
then the misses seen in a common harm's cells tell how many a rare one hides. The
**pooled** model is the latent-class model of ``judge_error`` with one sensitivity and
one specificity for all the cells of a harm (each cell keeps its own rate π).

**Test first.** The pooled model is used only when a likelihood-ratio test does not
reject it against the per-cell model at :data:`POOL_ALPHA` (the per-cell model, in the
stratified coordinates — the judge's "yes" share and each verdict's share of defects —
has its maximum in closed form; the pooled one is maximized numerically). The test's
level is set high, so a judge whose error differs between cells is caught before
pooling biases a cell; ``benchmarks/bench_label_allocation.py`` checks coverage with a
judge whose sensitivity differs by cell. Inclusion probabilities that depend only on the
cell and the judge's verdict (a label plan) leave both likelihoods as they are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from corix.measurement.judge_error import (
    BURN_IN,
    CHAINS,
    CellCounts,
    CorrectedRate,
    corrected_rate,
    group_seed,
    thin_note,
)

POOL_ALPHA = 0.2
import os
MODE = os.environ.get("POOLMODE", "test")
PLANPOOL = os.environ.get("PLANPOOL", "test")
"""The equality test's level: pooled only when its p-value is at least this."""

POOLED_METHOD = (
    "latent-class posterior over the judged samples of all the harm's cells with one "
    "sensitivity and specificity (a likelihood-ratio test did not reject them at "
    f"{POOL_ALPHA}), median and equal-tailed credible interval"
)

__all__ = [
    "POOLED_METHOD",
    "POOL_ALPHA",
    "PooledFit",
    "cell_counts",
    "corrected_rates",
    "pooled_draws",
    "pooling_test",
]


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
    """Each cell's corrected rate (``judged[i]`` is cell ``groups[i]``'s judged sample),
    pooled when :func:`pooling_test` does not reject, else cell by cell."""
    counts = [cell_counts(cell, trusted) for cell in judged]
    fit = pooling_test(counts) if MODE == "test" else PooledFit(0, int(MODE != "none"), 1.0)
    options = {"judge": judge, "reference": reference, "seed": seed, "confidence": confidence}
    if not fit.pooled or resamples <= 0:
        return [
            corrected_rate(g, j, trusted, resamples=resamples, **options)  # type: ignore[arg-type]
            for g, j in zip(groups, judged, strict=True)
        ]
    label = {"cells": "/".join(str(sorted(g.items())) for g in groups)}
    draws = (pooled_draws if MODE == "test" else partial_draws)(counts, resamples, group_seed(seed, label))
    tail = (1 - confidence) / 2
    low, median, high = np.quantile(draws, [tail, 0.5, 1 - tail], axis=0)
    total = CellCounts(*np.sum([c.as_tuple() for c in counts], axis=0).tolist())
    rates = []
    for at, (g, j) in enumerate(zip(groups, judged, strict=True)):
        base = corrected_rate(g, j, trusted, resamples=0, **options)  # type: ignore[arg-type]
        update = {
            "corrected_rate": float(median[at]),
            "ci_low": float(low[at]),
            "ci_high": float(high[at]),
            "method": POOLED_METHOD,
            "pooling_p": fit.p_value,
            "note": thin_note(total, float(median[at]), reference),
        }
        rates.append(base.model_copy(update=update))
    return rates


def cell_counts(judged: Mapping[str, float], trusted: Mapping[str, float]) -> CellCounts:
    """One cell's counts: ``judged`` its dialogues' verdicts, ``trusted`` any labels."""
    keys = sorted(judged)
    verdicts = np.array([judged[k] >= 0.5 for k in keys], dtype=bool)
    pairs = [k for k in keys if k in trusted]
    return CellCounts.of(
        verdicts,
        np.array([judged[k] >= 0.5 for k in pairs], dtype=bool),
        np.array([trusted[k] >= 0.5 for k in pairs], dtype=bool),
    )


@dataclass(frozen=True, slots=True)
class PooledFit:
    """The test's statistic, degrees of freedom and p-value; ``pooled``: not rejected."""

    statistic: float
    df: int
    p_value: float

    @property
    def pooled(self) -> bool:
        return self.df > 0 and self.p_value >= POOL_ALPHA


def pooling_test(cells: Sequence[CellCounts]) -> PooledFit:
    """Likelihood-ratio test of one sensitivity and specificity for all ``cells``."""
    saturated = sum(_saturated(c) for c in cells)
    # free per-cell parameters: the "yes" share, and each labelled stratum's defect share
    free = sum(
        (c.judged > 0) + (c.tp + c.fp > 0) + (c.fn + c.tn > 0) for c in cells
    )
    df = free - (sum(c.judged > 0 for c in cells) + 2)
    if df <= 0:
        return PooledFit(0.0, 0, 1.0)
    start = np.concatenate(
        [special.logit(np.clip([_rate(c) for c in cells], 0.01, 0.99)), [1.5, 1.5]]
    )
    fit = optimize.minimize(lambda x: -_pooled_loglik(x, cells), start, method="BFGS")
    statistic = max(0.0, 2 * (saturated + float(fit.fun)))
    return PooledFit(statistic, df, float(stats.chi2.sf(statistic, df)))


def pooled_draws(
    cells: Sequence[CellCounts], draws: int, seed: Sequence[int] | int
) -> np.ndarray:
    """``draws`` × cells posterior draws of each cell's rate with one sensitivity and
    specificity (Jeffreys prior on each rate, uniform on the two accuracies)."""
    tp, fn, fp, tn, yes, no = np.array([c.as_tuple() for c in cells]).T
    n_cal = tp + fn + fp + tn
    rng = np.random.default_rng(seed)
    chains = min(CHAINS, draws)
    per_chain = math.ceil(draws / chains)
    se = np.full((chains, 1), (tp.sum() + 1) / (tp.sum() + fn.sum() + 2))
    sp = np.full((chains, 1), (tn.sum() + 1) / (tn.sum() + fp.sum() + 2))
    pi = np.tile((tp + fn + 0.5) / (n_cal + 1), (chains, 1))
    kept = []
    for step in range(BURN_IN + per_chain):
        flagged = pi * se
        missed = pi * (1 - se)
        hidden_yes = rng.binomial(yes, flagged / (flagged + (1 - pi) * (1 - sp)))
        hidden_no = rng.binomial(no, missed / (missed + (1 - pi) * sp))
        defects = tp + fn + hidden_yes + hidden_no
        pi = rng.beta(0.5 + defects, 0.5 + n_cal + yes + no - defects)
        found, lost = (tp + hidden_yes).sum(1), (fn + hidden_no).sum(1)
        cleared, flagged_clean = (tn + no - hidden_no).sum(1), (fp + yes - hidden_yes).sum(1)
        se = rng.beta(1 + found, 1 + lost)[:, None]
        sp = rng.beta(1 + cleared, 1 + flagged_clean)[:, None]
        if step >= BURN_IN:
            kept.append(pi)
    return np.concatenate(kept)[:draws]


def _rate(c: CellCounts) -> float:
    """The stratified estimate of the cell's rate (a start for the pooled fit)."""
    q = c.judge_yes / max(c.judged, 1)
    ppv = (c.tp + 0.5) / (c.tp + c.fp + 1)
    missed = (c.fn + 0.5) / (c.fn + c.tn + 1)
    return q * ppv + (1 - q) * missed


def _binomial(hits: float, misses: float, share: float) -> float:
    return float(special.xlogy(hits, share) + special.xlog1py(misses, -share))


def _saturated(c: CellCounts) -> float:
    """The per-cell model's maximum log-likelihood (closed form)."""
    total = 0.0
    if c.judged:
        q = c.judge_yes / c.judged
        total += _binomial(c.judge_yes, c.judged - c.judge_yes, q)
    if c.tp + c.fp:
        total += _binomial(c.tp, c.fp, c.tp / (c.tp + c.fp))
    if c.fn + c.tn:
        total += _binomial(c.fn, c.tn, c.fn / (c.fn + c.tn))
    return total


def _pooled_loglik(x: np.ndarray, cells: Sequence[CellCounts]) -> float:
    rates = special.expit(x[:-2])
    se, sp = special.expit(x[-2]), special.expit(x[-1])
    total = 0.0
    for c, pi in zip(cells, rates, strict=True):
        q = min(max(pi * se + (1 - pi) * (1 - sp), 1e-12), 1 - 1e-12)
        total += _binomial(c.judge_yes, c.judged - c.judge_yes, q)
        total += _binomial(c.tp, c.fp, min(pi * se / q, 1 - 1e-12))
        total += _binomial(c.fn, c.tn, max(pi * (1 - se) / (1 - q), 1e-12))
    return total


_MEANS = np.linspace(0.0125, 0.9875, 40)
_CONCENTRATIONS = np.geomspace(2, 4096, 12)
_GRID_M, _GRID_K = (g.ravel() for g in np.meshgrid(_MEANS, _CONCENTRATIONS))
_GRID_A, _GRID_B = _GRID_M * _GRID_K, (1 - _GRID_M) * _GRID_K
_GRID_NORM = special.betaln(_GRID_A, _GRID_B)


def partial_draws(
    cells: Sequence[CellCounts], draws: int, seed: Sequence[int] | int
) -> np.ndarray:
    """``draws`` × cells posterior draws of each cell's rate when each cell's sensitivity
    (and specificity) is drawn from one Beta whose mean and concentration are learnt."""
    tp, fn, fp, tn, yes, no = np.array([c.as_tuple() for c in cells]).T
    n_cal = tp + fn + fp + tn
    rng = np.random.default_rng(seed)
    chains = min(CHAINS, draws)
    per_chain = math.ceil(draws / chains)
    se = np.tile((tp + 1) / (tp + fn + 2), (chains, 1))
    sp = np.tile((tn + 1) / (tn + fp + 2), (chains, 1))
    pi = np.tile((tp + fn + 0.5) / (n_cal + 1), (chains, 1))
    kept = []
    for step in range(BURN_IN + per_chain):
        flagged = pi * se
        missed = pi * (1 - se)
        hidden_yes = rng.binomial(yes, flagged / (flagged + (1 - pi) * (1 - sp)))
        hidden_no = rng.binomial(no, missed / (missed + (1 - pi) * sp))
        defects = tp + fn + hidden_yes + hidden_no
        pi = rng.beta(0.5 + defects, 0.5 + n_cal + yes + no - defects)
        a, b = _hyper(rng, se)
        se = rng.beta(a + tp + hidden_yes, b + fn + hidden_no)
        a, b = _hyper(rng, sp)
        sp = rng.beta(a + tn + no - hidden_no, b + fp + yes - hidden_yes)
        if step >= BURN_IN:
            kept.append(pi)
    return np.concatenate(kept)[:draws]


def _hyper(rng: np.random.Generator, shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Beta's parameters drawn from their grid given each chain's cell ``shares``."""
    shares = np.clip(shares, 1e-9, 1 - 1e-9)
    logs, log1s = np.log(shares).sum(1), np.log1p(-shares).sum(1)
    density = (
        np.outer(logs, _GRID_A - 1)
        + np.outer(log1s, _GRID_B - 1)
        - shares.shape[1] * _GRID_NORM
    )
    weights = np.exp(density - density.max(axis=1, keepdims=True)).cumsum(axis=1)
    drawn = rng.random(len(weights)) * weights[:, -1]
    pick = np.minimum((weights < drawn[:, None]).sum(axis=1), len(_GRID_A) - 1)
    return _GRID_A[pick][:, None], _GRID_B[pick][:, None]
