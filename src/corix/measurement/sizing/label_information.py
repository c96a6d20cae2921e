"""How uncertain each cell's corrected rate is expected to be after more labels.

The corrected rate's latent-class model (:mod:`corix.measurement.judges.corrected_rate`) sees, in
a cell, every judged dialogue's verdict (a binomial with the judge's "yes" share q) and,
on a labelled dialogue, its truth given the verdict (a binomial with the "yes"
dialogues' share of defects, or the "no" dialogues'). Its Fisher information in the
cell's (rate, sensitivity, specificity) is the sum of these parts, so ``n`` more labels
in a stratum add ``n`` times that stratum's part, and the rate's variance after them is
read off the inverse (a rank-one update). A stratum with ``n`` labels counts as
``n + 1``, so an unlabelled one is not certain. The model is the per-cell one: the
partial pooling of :mod:`corix.measurement.judges.pooling` can only narrow further, by
how much depends on how alike the cells turn out, which the labels are there to show.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from corix.measurement.judges import CellCounts

__all__ = ["Information", "information_parts"]


class Information:
    """Each cell's covariance of (rate, sensitivity, specificity), at the values its
    labels so far estimate."""

    def __init__(self, cells: Sequence[CellCounts]) -> None:
        self.parts = [information_parts(*_stratified(c)) for c in cells]
        self.covariance = []
        for cell, parts in zip(cells, self.parts, strict=True):
            counts = (cell.judged, cell.tp + cell.fp + 1, cell.fn + cell.tn + 1)
            information = sum(
                (n / spread * np.outer(g, g) for n, (g, spread) in zip(counts, parts, strict=True)),
                np.zeros((3, 3)),
            )
            self.covariance.append(np.linalg.pinv(information))

    def sd(self) -> np.ndarray:
        """Each cell's rate's standard deviation."""
        return np.sqrt(np.maximum([c[0, 0] for c in self.covariance], 0.0))

    def sd_after(self, at: int, stratum: int, labels: int) -> float:
        """Cell ``at``'s rate's standard deviation after ``labels`` more in its ``stratum``
        (0: the judge's "yes", 1: its "no")."""
        covariance, u = self.covariance[at], self._vector(at, stratum, labels)
        lifted = covariance @ u
        return math.sqrt(max(covariance[0, 0] - lifted[0] ** 2 / (1 + u @ lifted), 0.0))

    def add(self, at: int, stratum: int, labels: int) -> None:
        """Take ``labels`` more in cell ``at``'s ``stratum`` as given."""
        covariance, u = self.covariance[at], self._vector(at, stratum, labels)
        lifted = covariance @ u
        self.covariance[at] = covariance - np.outer(lifted, lifted) / (1 + u @ lifted)

    def _vector(self, at: int, stratum: int, labels: int) -> np.ndarray:
        gradient, spread = self.parts[at][1 + stratum]
        return gradient * math.sqrt(labels / spread)


def information_parts(rate: float, se: float, sp: float) -> list[tuple[np.ndarray, float]]:
    """The gradients of q, the "yes" dialogues' and the "no" dialogues' shares of defects
    in (rate, sensitivity, specificity), each with its binomial variance per dialogue."""
    q = rate * se + (1 - rate) * (1 - sp)
    dq = np.array([se + sp - 1, rate, rate - 1])
    ppv = rate * se / q
    dppv = (np.array([se, rate, 0.0]) * q - rate * se * dq) / q**2
    missed = rate * (1 - se) / (1 - q)
    dmissed = (np.array([1 - se, -rate, 0.0]) * (1 - q) + rate * (1 - se) * dq) / (1 - q) ** 2
    return [(g, _spread(p)) for g, p in ((dq, q), (dppv, ppv), (dmissed, missed))]


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
