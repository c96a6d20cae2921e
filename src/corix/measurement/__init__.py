"""Measurement layer: CoRIx trees, summarizers, scoring with bootstrap intervals, statistics.

Load a tree (``load_tree("aria_pilot")`` or a YAML path), build a :class:`LeafTable` of
answers, and ``score_tree`` it: one :class:`NodeResult` tree per application.
"""

from corix.measurement.bootstrap import Resample, two_stage_resamples
from corix.measurement.comparison import ScoreTable, compare_applications, compare_runs
from corix.measurement.interdependency import (
    Correlation,
    CorrelationMatrix,
    correlate_across_applications,
    correlate_across_dialogues,
    spearman_matrix,
)
from corix.measurement.leaves import (
    Categorical,
    LeafError,
    LeafSource,
    LeafTable,
    annotator_kind,
)
from corix.measurement.questionnaire_stats import (
    GroupComparison,
    ItemSummary,
    PairwiseTest,
    compare_groups,
    describe_items,
    holm_adjust,
    item_key,
    questionnaire_items,
)
from corix.measurement.results import NodeProvenance, NodeResult, NodeValue
from corix.measurement.scoring import (
    DialogueScores,
    dialogues_under,
    score_by_dialogue,
    score_tree,
    score_tree_cli_json,
    score_tree_per_annotator_kind,
)
from corix.measurement.summarizers import SUMMARIZERS, NumericSummarizer, Sample, Summarizer
from corix.measurement.tree_loading import builtin_trees, load_tree, parse_tree
from corix.measurement.tree_spec import NodeInstance, TreeSpec
from corix.measurement.views import ViewGap, compare_views

__all__ = [
    "SUMMARIZERS",
    "Categorical",
    "Correlation",
    "CorrelationMatrix",
    "DialogueScores",
    "GroupComparison",
    "ItemSummary",
    "LeafError",
    "LeafSource",
    "LeafTable",
    "NodeInstance",
    "NodeProvenance",
    "NodeResult",
    "NodeValue",
    "NumericSummarizer",
    "PairwiseTest",
    "Resample",
    "Sample",
    "ScoreTable",
    "Summarizer",
    "TreeSpec",
    "ViewGap",
    "annotator_kind",
    "builtin_trees",
    "compare_applications",
    "compare_groups",
    "compare_runs",
    "compare_views",
    "correlate_across_applications",
    "correlate_across_dialogues",
    "describe_items",
    "dialogues_under",
    "holm_adjust",
    "item_key",
    "load_tree",
    "parse_tree",
    "questionnaire_items",
    "score_by_dialogue",
    "score_tree",
    "score_tree_cli_json",
    "score_tree_per_annotator_kind",
    "spearman_matrix",
    "two_stage_resamples",
]
