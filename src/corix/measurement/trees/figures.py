"""One tree scored for every application, with what a report derives from the scores.

The report asks for one tree at a time and shows the scores beside the application
comparison, the two views' gaps, the correlations and the gating warnings; one call here
gives it all of them, so the report needs none of the helpers that compute them.
"""

from __future__ import annotations

from dataclasses import dataclass

from corix.measurement.trees.comparison import ScoreTable, compare_applications
from corix.measurement.trees.compiled import TreeSpec
from corix.measurement.trees.gating_check import undeclared_gating
from corix.measurement.trees.interdependency import (
    CorrelationMatrix,
    correlate_across_applications,
    correlate_across_dialogues,
)
from corix.measurement.trees.leaves import LeafTable
from corix.measurement.trees.results import NodeResult
from corix.measurement.trees.scoring import dimension_ids, score_tree
from corix.measurement.trees.views import ViewGap, compare_views


@dataclass(frozen=True)
class TreeFigures:
    """``results`` maps an application to its scored root (with per-dialogue scores).

    ``dimensions`` are the nodes compared and correlated (the root's numeric children);
    ``warnings`` name questions the labels show are gated but the tree does not declare so.
    """

    results: dict[str, NodeResult]
    dimensions: tuple[str, ...]
    comparison: ScoreTable
    views: tuple[ViewGap, ...]
    dialogue_correlations: CorrelationMatrix
    application_correlations: CorrelationMatrix
    warnings: tuple[str, ...]


def tree_figures(
    spec: TreeSpec,
    leaves: LeafTable,
    *,
    bootstrap: int,
    seed: int,
    confidence: float,
    view_gap: float,
) -> TreeFigures:
    """Score ``spec`` on ``leaves`` and derive the comparison, views and correlations;
    ``view_gap`` is the difference (scale units) at which the two views disagree."""
    results = score_tree(
        spec,
        leaves,
        bootstrap=bootstrap,
        seed=seed,
        confidence=confidence,
        include_dialogues=True,
    )
    dimensions = dimension_ids(spec)
    return TreeFigures(
        results=results,
        dimensions=dimensions,
        comparison=compare_applications(results),
        views=tuple(compare_views(results, threshold=view_gap)),
        dialogue_correlations=correlate_across_dialogues(spec, leaves, dimensions),
        application_correlations=correlate_across_applications(results, dimensions),
        warnings=tuple(found.message for found in undeclared_gating(spec, leaves)),
    )
