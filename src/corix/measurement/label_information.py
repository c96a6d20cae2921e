"""How uncertain each cell's corrected rate is expected to be after more labels.

The corrected rate's model (:mod:`corix.measurement.judge_error`, or the pooled one of
:mod:`corix.measurement.judge_pooling`) sees, in each cell, every judged dialogue's
verdict (a binomial with the judge's "yes" share q) and, on a labelled dialogue, its
truth given the verdict (a binomial with the "yes" dialogues' share of defects, or the
"no" dialogues'). Its Fisher information in (rate, sensitivity, specificity) — one
sensitivity and specificity per cell, or one for all cells when pooled — is the sum of
these parts, so ``n`` more labels in a stratum add ``n`` times that stratum's part, and
the rates' variances after them are read off the inverse (one rank-one update each).
A stratum with ``n`` labels counts as ``n + 1``, so an unlabelled one is not certain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from corix.measurement.judge_error import CellCounts

__all__ = ["Information"]


class Information:
    """The rates' covariance for ``cells`` under the per-cell or the pooled model, at
    the rates and accuracies the labels so far estimate."""

    def __init__(self, cells: Sequence[CellCounts], *, pooled: bool) -> None:
        self.cells = list(cells)
        self.pooled = pooled
        estimates = [_stratified(c) for c in self.cells]
        if pooled:
            sizes = np.array([c.judged for c in self.cells], dtype=float)
            rates = np.array([e[0] for e in estimates])
            found = sum(s * e[0] * e[1] for s, e in zip(sizes, estimates, strict=True))
            cleared = sum(s * (1 - e[0]) * e[2] for s, e in zip(sizes, estimates, strict=True))
            se = found / max(float(sizes @ rates), 1e-9)
            sp = cleared / max(float(sizes @ (1 - rates)), 1e-9)
            estimates = [(rate, se, sp) for rate in rates]
        self.size = len(self.cells) + 2 if pooled else 3 * len(self.cells)
        # per cell: (parameter indices, gradients of q, PPV, FOR and their variances)
        self.parts = [self._parts(at, *e) for at, e in enumerate(estimates)]
        information = np.zeros((self.size, self.size))
        for at, cell in enumerate(self.cells):
            labelled = (cell.tp + cell.fp + 1, cell.fn + cell.tn + 1)
            for count, (gradient, spread) in zip(
                (cell.judged, *labelled), self.parts[at][1], strict=True
            ):
                self._add(information, at, gradient, count / spread)
        self.covariance = np.linalg.pinv(information)

    def sd(self) -> np.ndarray:
        """Each cell's rate's standard deviation."""
        return np.sqrt(np.maximum(np.diag(self.covariance)[self._rate_indices()], 0.0))

    def after(self, at: int, stratum: int, labels: int) -> np.ndarray:
        """Each cell's rate's variance after ``labels`` more in cell ``at``'s ``stratum``
        (0: the judge's "yes", 1: its "no")."""
        u = self._vector(at, stratum, labels)
        lifted = self.covariance @ u
        cut = lifted[self._rate_indices()] ** 2 / (1 + u @ lifted)
        return np.diag(self.covariance)[self._rate_indices()] - cut

    def add(self, at: int, stratum: int, labels: int) -> None:
        """Take ``labels`` more in cell ``at``'s ``stratum`` as given."""
        u = self._vector(at, stratum, labels)
        lifted = self.covariance @ u
        self.covariance = self.covariance - np.outer(lifted, lifted) / (1 + u @ lifted)

    def _vector(self, at: int, stratum: int, labels: int) -> np.ndarray:
        indices, parts = self.parts[at]
        gradient, spread = parts[1 + stratum]
        u = np.zeros(self.size)
        u[list(indices)] = gradient * math.sqrt(labels / spread)
        return u

    def _rate_indices(self) -> list[int]:
        return list(range(len(self.cells))) if self.pooled else [3 * c for c in range(len(self.cells))]

    def _indices(self, at: int) -> tuple[int, int, int]:
        if self.pooled:
            return at, len(self.cells), len(self.cells) + 1
        return 3 * at, 3 * at + 1, 3 * at + 2

    def _add(self, information: np.ndarray, at: int, gradient: np.ndarray, weight: float) -> None:
        indices = list(self._indices(at))
        information[np.ix_(indices, indices)] += weight * np.outer(gradient, gradient)

    def _parts(
        self, at: int, rate: float, se: float, sp: float
    ) -> tuple[tuple[int, int, int], list[tuple[np.ndarray, float]]]:
        q = rate * se + (1 - rate) * (1 - sp)
        dq = np.array([se + sp - 1, rate, rate - 1])
        ppv = rate * se / q
        dppv = (np.array([se, rate, 0.0]) * q - rate * se * dq) / q**2
        missed = rate * (1 - se) / (1 - q)
        dmissed = (np.array([1 - se, -rate, 0.0]) * (1 - q) + rate * (1 - se) * dq) / (1 - q) ** 2
        parts = [(g, _spread(p)) for g, p in ((dq, q), (dppv, ppv), (dmissed, missed))]
        return self._indices(at), parts


def _spread(share: float) -> float:
    share = min(max(share, 1e-6), 1 - 1e-6)
    return share * (1 - share)


def _stratified(c: CellCounts) -> tuple[float, float, float]:
    """The cell's rate, sensitivity and specificity from its verdict shares and each
    verdict's share of defects among its labels (Jeffreys-smoothed)."""
    q = c.judge_yes / max(c.judged, 1)
    q = min(max(q, 0.5 / (c.judged + 1)), 1 - 0.5 / (c.judged + 1))
    ppv = (c.tp + 0.5) / (c.tp + c.fp + 1)
    missed = (c.fn + 0.5) / (c.fn + c.tn + 1)
    rate = q * ppv + (1 - q) * missed
    return rate, q * ppv / rate, (1 - q) * (1 - missed) / (1 - rate)
