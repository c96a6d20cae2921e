"""How dimensions move together: Spearman correlations across dialogues or applications.

Every dimension is a risk (higher = worse), so a *negative* correlation between two of
them is a trade-off: where one risk is lower, the other tends to be higher.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from corix.measurement.stats import FloatArray, IntArray
from corix.measurement.trees.compiled import TreeSpec
from corix.measurement.trees.leaves import LeafTable
from corix.measurement.trees.results import NodeResult
from corix.measurement.trees.scoring import score_by_dialogue

MIN_PAIRS = 3


@dataclass(frozen=True)
class Correlation:
    """Spearman's rho between two nodes over the ``n`` units where both have a value."""

    first: str
    second: str
    rho: float | None
    p_value: float | None
    n: int


@dataclass(frozen=True)
class CorrelationMatrix:
    names: tuple[str, ...]
    rho: FloatArray
    p_value: FloatArray
    n: IntArray

    def pairs(self) -> list[Correlation]:
        return [
            Correlation(
                self.names[i],
                self.names[j],
                _number(self.rho[i, j]),
                _number(self.p_value[i, j]),
                int(self.n[i, j]),
            )
            for i, j in combinations(range(len(self.names)), 2)
        ]

    def tradeoffs(self, threshold: float = -0.3) -> list[Correlation]:
        """Pairs whose rho is at or below ``threshold`` (a negative number)."""
        return [pair for pair in self.pairs() if pair.rho is not None and pair.rho <= threshold]


def spearman_matrix(data: FloatArray, names: Sequence[str]) -> CorrelationMatrix:
    """Pairwise Spearman correlations of ``data``'s columns (units × variables).

    Each pair uses the units where both are present (not NaN); fewer than three such
    units, or a constant column, leave the pair undefined (NaN).
    """
    from scipy import stats  # loaded on use: importing scipy costs about a second

    k = data.shape[1]
    rho = np.full((k, k), np.nan)
    p_value = np.full((k, k), np.nan)
    n = np.zeros((k, k), dtype=np.int64)
    for i in range(k):
        for j in range(i, k):
            both = ~np.isnan(data[:, i]) & ~np.isnan(data[:, j])
            n[i, j] = n[j, i] = int(both.sum())
            x, y = data[both, i], data[both, j]
            if n[i, j] < MIN_PAIRS or np.ptp(x) == 0 or np.ptp(y) == 0:
                continue
            result = stats.spearmanr(x, y)
            rho[i, j] = rho[j, i] = result.statistic
            p_value[i, j] = p_value[j, i] = result.pvalue
    return CorrelationMatrix(tuple(names), rho, p_value, n)


def correlate_across_applications(
    results: Mapping[str, NodeResult], node_ids: Sequence[str] | None = None
) -> CorrelationMatrix:
    """Correlate nodes over applications (default: the root's numeric children)."""
    roots = list(results.values())
    if node_ids is None:
        node_ids = (
            [child.id for child in roots[0].children if not isinstance(child.value, tuple)]
            if roots
            else []
        )
    data = np.full((len(roots), len(node_ids)), np.nan)
    for i, root in enumerate(roots):
        for j, node_id in enumerate(node_ids):
            value = root.find(node_id).numeric_value
            if value is not None:
                data[i, j] = value
    return spearman_matrix(data, node_ids)


def correlate_across_dialogues(
    spec: TreeSpec,
    leaves: LeafTable,
    node_ids: Sequence[str] | None = None,
    application: str | None = None,
) -> CorrelationMatrix:
    """Correlate nodes over dialogues, each scored on its own; optionally one application."""
    scores = score_by_dialogue(spec, leaves, node_ids)
    data = scores.values
    if application is not None:
        data = data[np.asarray(scores.applications) == application]
    return spearman_matrix(data, scores.node_ids)


def _number(value: np.floating[Any] | float) -> float | None:
    return None if np.isnan(value) else float(value)
