"""Side-by-side tables: one tree for several applications, or over a series of runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from corix.measurement.stats import FloatArray, IntArray
from corix.measurement.trees.results import NodeResult


@dataclass(frozen=True)
class ScoreTable:
    """Node values in a grid: ``values[i, j]`` for ``rows[i]`` × ``columns[j]`` (NaN = empty)."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    values: FloatArray
    n: IntArray

    def value(self, row: str, column: str) -> float | None:
        number = self.values[self.rows.index(row), self.columns.index(column)]
        return None if np.isnan(number) else float(number)


def _numeric_nodes(root: NodeResult) -> list[NodeResult]:
    return [node for node in root.walk() if not isinstance(node.value, tuple)]


def compare_applications(results: Mapping[str, NodeResult]) -> ScoreTable:
    """Node id × application, for results of one tree (aggregation nodes left out)."""
    applications = tuple(results)
    if not applications:
        return ScoreTable((), (), np.zeros((0, 0)), np.zeros((0, 0), dtype=np.int64))
    node_ids = tuple(node.id for node in _numeric_nodes(results[applications[0]]))
    values = np.full((len(node_ids), len(applications)), np.nan)
    counts = np.zeros(values.shape, dtype=np.int64)
    for j, application in enumerate(applications):
        nodes = {node.id: node for node in _numeric_nodes(results[application])}
        for i, node_id in enumerate(node_ids):
            node = nodes[node_id]
            values[i, j] = np.nan if node.numeric_value is None else node.numeric_value
            counts[i, j] = node.n
    return ScoreTable(node_ids, applications, values, counts)


def compare_runs(
    runs: Mapping[str, Mapping[str, NodeResult]],
    application: str,
    node_ids: Sequence[str] | None = None,
) -> ScoreTable:
    """Run id × node id for one application, rows in the order of ``runs`` (e.g. by date).

    ``node_ids`` defaults to the numeric nodes of the first run that scored the
    application; a run without the application (or the node) has an empty row (cell).
    """
    run_ids = tuple(runs)
    if node_ids is None:
        first = next((r[application] for r in runs.values() if application in r), None)
        node_ids = [node.id for node in _numeric_nodes(first)] if first is not None else []
    columns = tuple(node_ids)
    values = np.full((len(run_ids), len(columns)), np.nan)
    counts = np.zeros(values.shape, dtype=np.int64)
    for i, run_id in enumerate(run_ids):
        root = runs[run_id].get(application)
        if root is None:
            continue
        nodes = {node.id: node for node in root.walk()}
        for j, node_id in enumerate(columns):
            node = nodes.get(node_id)
            if node is not None and node.numeric_value is not None:
                values[i, j] = node.numeric_value
            counts[i, j] = node.n if node is not None else 0
    return ScoreTable(run_ids, columns, values, counts)
