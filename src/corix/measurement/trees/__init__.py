"""CoRIx trees: their YAML form, compiled and scored with bootstrap intervals, the
summarizers their nodes use, and what a report derives from a scored tree. The shipped
trees (``aria_pilot``, ``ai_rmf``) are the YAML files beside these modules.
"""

from corix.measurement.trees.comparison import ScoreTable, compare_runs
from corix.measurement.trees.compiled import TreeSpec
from corix.measurement.trees.figures import tree_figures
from corix.measurement.trees.filters import FILTER_COLUMNS, LeafFilter
from corix.measurement.trees.interdependency import CorrelationMatrix
from corix.measurement.trees.leaves import (
    REQUIRED_COLUMNS,
    Categorical,
    LeafError,
    LeafSource,
    LeafTable,
    RawValue,
)
from corix.measurement.trees.loading import load_tree, read_tree_text
from corix.measurement.trees.results import NodeDocument, NodeResult
from corix.measurement.trees.scoring import (
    dimension_ids,
    score_tree,
    score_tree_cli_json,
    score_tree_per_annotator_kind,
)
from corix.measurement.trees.summarizers import BUILTIN_SUMMARIZERS, SUMMARIZERS, Summarizer
from corix.measurement.trees.views import ViewGap

__all__ = [
    "BUILTIN_SUMMARIZERS",
    "FILTER_COLUMNS",
    "REQUIRED_COLUMNS",
    "SUMMARIZERS",
    "Categorical",
    "CorrelationMatrix",
    "LeafError",
    "LeafFilter",
    "LeafSource",
    "LeafTable",
    "NodeDocument",
    "NodeResult",
    "RawValue",
    "ScoreTable",
    "Summarizer",
    "TreeSpec",
    "ViewGap",
    "compare_runs",
    "dimension_ids",
    "load_tree",
    "read_tree_text",
    "score_tree",
    "score_tree_cli_json",
    "score_tree_per_annotator_kind",
    "tree_figures",
]
