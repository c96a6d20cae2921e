"""How uncertain each cell's corrected rate is expected to be after more labels.

The corrected rate's latent-class model (:mod:`corix.measurement.judges.corrected_rate`) sees, in
a cell, every judged dialogue's verdict (a binomial with the judge's "yes" share q) and,
on a labelled dialogue, its truth given the verdict (a binomial with the "yes"
dialogues' share of defects, or the "no" dialogues'). Its Fisher information in the
cell's (rate, sensitivity, specificity) is the sum of these parts, so ``n`` more labels
in a stratum add ``n`` times that stratum's part, and the rates' variances after them
are read off the inverse (a rank-one update). A stratum with ``n`` labels counts as
``n + 1``, so an unlabelled one is not certain.

Over several cells of a harm the rates are partially pooled
(:mod:`corix.measurement.judges.pooling`): each cell's sensitivity and specificity lie
around a mean shared by the cells, as far apart as the pooling learns from the labels
(:func:`corix.measurement.judges.judge_spread`). Here that is the large-sample version:
two more parameters, the means, and a normal prior tying each cell's sensitivity
(specificity) to its mean with that spread. A label in one cell then narrows the others
through the means, as much as the cells are alike; with a large spread the cells are
apart and each is its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from corix.measurement.judges import CellCounts

__all__ = ["Information", "information_parts"]

_SMALLEST_SPREAD = 0.005
"""No plan counts cells as more alike than this: a judge exactly alike everywhere would
make a label anywhere as good as one in the cell itself."""


class Information:
    """The cells' joint covariance of (rate, sensitivity, specificity) per cell, then the
    shared mean sensitivity and specificity where ``spread`` (their spread over cells)
    is given, at the values the labels so far estimate."""

    def __init__(
        self, cells: Sequence[CellCounts], spread: tuple[float, float] | None = None
    ) -> None:
        self.cells = len(cells)
        self.parts = [information_parts(*_stratified(c)) for c in cells]
        size = 3 * self.cells + (2 if spread is not None else 0)
        information = np.zeros((size, size))
        for at, (cell, parts) in enumerate(zip(cells, self.parts, strict=True)):
            block = slice(3 * at, 3 * at + 3)
            counts = (cell.judged, cell.tp + cell.fp + 1, cell.fn + cell.tn + 1)
            for n, (g, variance) in zip(counts, parts, strict=True):
                information[block, block] += n / variance * np.outer(g, g)
        if spread is not None:
            for offset, tau in enumerate(spread):
                precision = 1 / max(tau, _SMALLEST_SPREAD) ** 2
                mean = 3 * self.cells + offset
                for at in range(self.cells):
                    share = 3 * at + 1 + offset
                    information[share, share] += precision
                    information[mean, mean] += precision
                    information[share, mean] -= precision
                    information[mean, share] -= precision
        self.covariance = np.linalg.pinv(information)

    def sd(self) -> np.ndarray:
        """Each cell's rate's standard deviation."""
        return np.sqrt(np.maximum(np.diag(self.covariance)[0 : 3 * self.cells : 3], 0.0))

    def sd_after(self, at: int, stratum: int, labels: int) -> np.ndarray:
        """Each cell's rate's standard deviation after ``labels`` more in cell ``at``'s
        ``stratum`` (0: the judge's "yes", 1: its "no")."""
        u = self._vector(at, stratum, labels)
        lifted = self.covariance @ u
        variances = np.diag(self.covariance) - lifted**2 / (1 + float(u @ lifted))
        sds: np.ndarray = np.sqrt(np.maximum(variances[0 : 3 * self.cells : 3], 0.0))
        return sds

    def add(self, at: int, stratum: int, labels: int) -> None:
        """Take ``labels`` more in cell ``at``'s ``stratum`` as given."""
        u = self._vector(at, stratum, labels)
        lifted = self.covariance @ u
        self.covariance = self.covariance - np.outer(lifted, lifted) / (1 + u @ lifted)

    def _vector(self, at: int, stratum: int, labels: int) -> np.ndarray:
        gradient, variance = self.parts[at][1 + stratum]
        u = np.zeros(len(self.covariance))
        u[3 * at : 3 * at + 3] = gradient * math.sqrt(labels / variance)
        return u


def information_parts(rate: float, se: float, sp: float) -> list[tuple[np.ndarray, float]]:
    """The gradients of q, the "yes" dialogues' and the "no" dialogues' shares of defects
    in (rate, sensitivity, specificity), each with its binomial variance per dialogue."""
    q = rate * se + (1 - rate) * (1 - sp)
    dq = np.array([se + sp - 1, rate, rate - 1])
    ppv = rate * se / q
    dppv = (np.array([se, rate, 0.0]) * q - rate * se * dq) / q**2
    missed = rate * (1 - se) / (1 - q)
    dmissed = (np.array([1 - se, -rate, 0.0]) * (1 - q) + rate * (1 - se) * dq) / (1 - q) ** 2
    return [(g, _binomial_variance(p)) for g, p in ((dq, q), (dppv, ppv), (dmissed, missed))]


def _binomial_variance(share: float) -> float:
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
