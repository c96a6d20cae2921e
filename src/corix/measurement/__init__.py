"""Measurement layer: CoRIx trees, summarizers, scoring with bootstrap intervals, statistics.

Load a tree (``load_tree("aria_pilot")`` or a YAML path), build a :class:`LeafTable` of
answers, and ``score_tree`` it: one :class:`NodeResult` tree per application.
"""

from corix.measurement._stored_leaves import (
    HARM_CATEGORY_PREFIX,
    answer_text,
    leaf_question,
    leaves_from_answers,
    number_text,
)
from corix.measurement.bootstrap import Resample, two_stage_resamples
from corix.measurement.cell_cost import CellCost, SourceCost, cell_costs
from corix.measurement.comparison import ScoreTable, compare_applications, compare_runs
from corix.measurement.confidence_sequences import BETTING_CS, betting_confidence_sequence
from corix.measurement.core import (
    DEFAULT_RATE_GROUPING,
    Measurement,
    SettledChunk,
    SettledChunks,
    measure,
    measure_in_chunks,
    measure_series,
    resolve_spec,
    stored_answers,
    stored_leaves,
)
from corix.measurement.defect_rates import DefectRate
from corix.measurement.defects_query import DefectFigures, DefectsQuery, defect_figures
from corix.measurement.dialogue_filter import DialogueFilter, ListedDialogue, list_dialogues
from corix.measurement.filters import FILTER_COLUMNS, LeafFilter
from corix.measurement.gates import Estimate, GateResult, evaluate_gates
from corix.measurement.gating_check import UndeclaredGating, undeclared_gating
from corix.measurement.hit_at_k import HitRate, UnitHits, attack_rates, hit_at_k, hit_rates
from corix.measurement.interdependency import (
    Correlation,
    CorrelationMatrix,
    correlate_across_applications,
    correlate_across_dialogues,
    spearman_matrix,
)
from corix.measurement.item_wording import item_wordings
from corix.measurement.judge_error import CorrectedRate
from corix.measurement.leaves import (
    REQUIRED_COLUMNS,
    Categorical,
    LeafError,
    LeafSource,
    LeafTable,
    annotator_kind,
)
from corix.measurement.plan_sizing import (
    CellSize,
    EarlierRun,
    SizeRequest,
    earlier_run,
    plan_with_sizes,
    size_plan,
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
from corix.measurement.run_comparison import compare_rates, compare_trees
from corix.measurement.scoring import (
    DialogueScores,
    dialogues_under,
    dimension_ids,
    score_by_dialogue,
    score_tree,
    score_tree_cli_json,
    score_tree_per_annotator_kind,
)
from corix.measurement.sequential import SequentialDecider, cell_harms
from corix.measurement.sequential_record import (
    GroupDialogues,
    SequentialRecord,
    StoppedCell,
    sequential_record,
    sequential_records,
)
from corix.measurement.settlement import Settlement
from corix.measurement.settling import GUARDRAIL_VIOLATION
from corix.measurement.spec import AnnotatorSelector, MeasurementSpec, ResolvedSpec, load_spec
from corix.measurement.stopping_rules import (
    CellProgress,
    StoppingRule,
    cell_progress,
    parse_until,
    stopping_horizon,
)
from corix.measurement.summarizers import SUMMARIZERS, NumericSummarizer, Sample, Summarizer
from corix.measurement.tree_loading import builtin_trees, load_tree, parse_tree
from corix.measurement.tree_spec import NodeInstance, TreeSpec
from corix.measurement.views import ViewGap, compare_views

__all__ = [
    "BETTING_CS",
    "DEFAULT_RATE_GROUPING",
    "FILTER_COLUMNS",
    "GUARDRAIL_VIOLATION",
    "HARM_CATEGORY_PREFIX",
    "REQUIRED_COLUMNS",
    "SUMMARIZERS",
    "AnnotatorSelector",
    "Categorical",
    "CellCost",
    "CellProgress",
    "CellSize",
    "CorrectedRate",
    "Correlation",
    "CorrelationMatrix",
    "DefectFigures",
    "DefectRate",
    "DefectsQuery",
    "DialogueFilter",
    "DialogueScores",
    "EarlierRun",
    "Estimate",
    "GateResult",
    "GroupComparison",
    "GroupDialogues",
    "HitRate",
    "ItemSummary",
    "LeafError",
    "LeafFilter",
    "LeafSource",
    "LeafTable",
    "ListedDialogue",
    "Measurement",
    "MeasurementSpec",
    "NodeInstance",
    "NodeProvenance",
    "NodeResult",
    "NodeValue",
    "NumericSummarizer",
    "PairwiseTest",
    "Resample",
    "ResolvedSpec",
    "Sample",
    "ScoreTable",
    "SequentialDecider",
    "SequentialRecord",
    "SettledChunk",
    "SettledChunks",
    "Settlement",
    "SizeRequest",
    "SourceCost",
    "StoppedCell",
    "StoppingRule",
    "Summarizer",
    "TreeSpec",
    "UndeclaredGating",
    "UnitHits",
    "ViewGap",
    "annotator_kind",
    "answer_text",
    "attack_rates",
    "betting_confidence_sequence",
    "builtin_trees",
    "cell_costs",
    "cell_harms",
    "cell_progress",
    "compare_applications",
    "compare_groups",
    "compare_rates",
    "compare_runs",
    "compare_trees",
    "compare_views",
    "correlate_across_applications",
    "correlate_across_dialogues",
    "defect_figures",
    "describe_items",
    "dialogues_under",
    "dimension_ids",
    "earlier_run",
    "evaluate_gates",
    "hit_at_k",
    "hit_rates",
    "holm_adjust",
    "item_key",
    "item_wordings",
    "leaf_question",
    "leaves_from_answers",
    "list_dialogues",
    "load_spec",
    "load_tree",
    "measure",
    "measure_in_chunks",
    "measure_series",
    "number_text",
    "parse_tree",
    "parse_until",
    "plan_with_sizes",
    "questionnaire_items",
    "resolve_spec",
    "score_by_dialogue",
    "score_tree",
    "score_tree_cli_json",
    "score_tree_per_annotator_kind",
    "sequential_record",
    "sequential_records",
    "size_plan",
    "spearman_matrix",
    "stopping_horizon",
    "stored_answers",
    "stored_leaves",
    "two_stage_resamples",
    "undeclared_gating",
]
