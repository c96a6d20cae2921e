"""Annotator vs user view: where what annotators labelled and what testers perceived differ.

In a tree split by source, a node's ``annotation`` child holds the annotator labels and
its ``questionnaire`` child the user perception, on the same scale. A gap beyond a
threshold is flagged for a closer look (e.g. users trusting answers that annotators
found wrong).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from corix.measurement.trees.leaves import LeafSource
from corix.measurement.trees.results import NodeResult


@dataclass(frozen=True)
class ViewGap:
    """Both views of one node for one application; ``difference`` = user − annotator."""

    application: str
    node_id: str
    context: Mapping[str, str]
    annotator: float | None
    user: float | None
    difference: float | None
    disagrees: bool


def compare_views(results: Mapping[str, NodeResult], *, threshold: float = 2.0) -> list[ViewGap]:
    """Every node split into annotator labels and user perception, per application.

    ``disagrees`` is set when both views have a value and they differ by more than
    ``threshold`` (in scale units); a missing view is reported, never flagged.
    """
    if threshold < 0:
        raise ValueError(f"threshold must be ≥ 0, got {threshold}")
    gaps = []
    for application, root in results.items():
        for node in root.walk():
            views = {child.context.get("source"): child for child in node.children}
            if (
                "source" in node.context
                or not {
                    LeafSource.ANNOTATION,
                    LeafSource.QUESTIONNAIRE,
                }
                <= views.keys()
            ):
                continue
            annotator = views[LeafSource.ANNOTATION].numeric_value
            user = views[LeafSource.QUESTIONNAIRE].numeric_value
            difference = user - annotator if annotator is not None and user is not None else None
            gaps.append(
                ViewGap(
                    application=application,
                    node_id=node.id,
                    context=node.context,
                    annotator=annotator,
                    user=user,
                    difference=difference,
                    disagrees=difference is not None and abs(difference) > threshold,
                )
            )
    return gaps
