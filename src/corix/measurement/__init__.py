"""Measurement layer: CoRIx trees, summarizers, scoring with bootstrap intervals, statistics.

Load a tree (``load_tree("aria_pilot")`` or a YAML path), build a :class:`LeafTable` of
answers, and ``score_tree`` it: one :class:`NodeResult` tree per application.
"""

from corix.measurement._tree_figures import tree_figures
from corix.measurement.cell_cost import CellCost, SourceCost, cell_costs
from corix.measurement.comparison import ScoreTable, compare_runs
from corix.measurement.core import (
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
from corix.measurement.hit_at_k import HitRate, attack_rates
from corix.measurement.interdependency import CorrelationMatrix
from corix.measurement.item_wording import item_wordings
from corix.measurement.judge_error import CorrectedRate
from corix.measurement.leaves import REQUIRED_COLUMNS, LeafTable
from corix.measurement.leaves_from_store import (
    HARM_CATEGORY_PREFIX,
    answer_text,
    leaf_question,
    leaves_from_answers,
    number_text,
)
from corix.measurement.results import NodeDocument, NodeResult
from corix.measurement.run_comparison import Compared, compare_measurements
from corix.measurement.scoring import dimension_ids, score_tree, score_tree_cli_json
from corix.measurement.sequential_record import SequentialRecord, sequential_records
from corix.measurement.settlement import Settlement
from corix.measurement.settling import GUARDRAIL_VIOLATION
from corix.measurement.simulation_gap import SimulationGap, simulation_gap_per_cell
from corix.measurement.spec import AnnotatorSelector, MeasurementSpec, ResolvedSpec, load_spec
from corix.measurement.summarizers import SUMMARIZERS, Summarizer
from corix.measurement.tree_loading import load_tree
from corix.measurement.tree_spec import TreeSpec
from corix.measurement.views import ViewGap
from corix.measurement.waves_run import WavesRequest, run_in_waves

__all__ = [
    "FILTER_COLUMNS",
    "GUARDRAIL_VIOLATION",
    "HARM_CATEGORY_PREFIX",
    "REQUIRED_COLUMNS",
    "SUMMARIZERS",
    "AnnotatorSelector",
    "CellCost",
    "Compared",
    "CorrectedRate",
    "CorrelationMatrix",
    "DefectFigures",
    "DefectRate",
    "DefectsQuery",
    "DialogueFilter",
    "HitRate",
    "LeafFilter",
    "LeafTable",
    "ListedDialogue",
    "Measurement",
    "MeasurementSpec",
    "NodeDocument",
    "NodeResult",
    "ResolvedSpec",
    "ScoreTable",
    "SequentialRecord",
    "SettledChunk",
    "SettledChunks",
    "Settlement",
    "SimulationGap",
    "SourceCost",
    "Summarizer",
    "TreeSpec",
    "ViewGap",
    "WavesRequest",
    "answer_text",
    "attack_rates",
    "cell_costs",
    "compare_measurements",
    "compare_runs",
    "defect_figures",
    "dimension_ids",
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
    "resolve_spec",
    "run_in_waves",
    "score_tree",
    "score_tree_cli_json",
    "sequential_records",
    "simulation_gap_per_cell",
    "stored_answers",
    "stored_leaves",
    "tree_figures",
]
