"""The measurement layer: every number corix reports, computed in one place.

``measure(db, runs, spec)`` settles the stored labels under a measurement specification
and returns one :class:`Measurement`: verdicts, defect rates with their intervals,
agreement, judge-corrected rates, and what a sequential run stopped on. CoRIx trees are
scored from the same record (``load_tree``, a :class:`LeafTable`, ``score_tree``: one
:class:`NodeResult` tree per application). Consumers format these numbers, never
recompute them. The folders (``stats``, ``trees``, ``labels``, ``judges``, ``stopping``,
``simulation``, ``sizing``, ``questionnaires``) are described in docs/architecture.md.
"""

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
from corix.measurement.hit_at_k import HitRate, attack_rates
from corix.measurement.judges import CorrectedRate
from corix.measurement.labels import (
    GUARDRAIL_VIOLATION,
    HARM_CATEGORY_PREFIX,
    Settlement,
    answer_text,
    leaf_question,
    leaves_from_answers,
    number_text,
)
from corix.measurement.questionnaires import item_wordings
from corix.measurement.run_comparison import Compared, compare_measurements
from corix.measurement.simulation import SimulationGap, simulation_gap_per_cell
from corix.measurement.sizing import CellCost, SourceCost, cell_costs
from corix.measurement.spec import AnnotatorSelector, MeasurementSpec, ResolvedSpec, load_spec
from corix.measurement.stopping import SequentialRecord, sequential_records
from corix.measurement.trees import (
    FILTER_COLUMNS,
    REQUIRED_COLUMNS,
    SUMMARIZERS,
    CorrelationMatrix,
    LeafFilter,
    LeafTable,
    NodeDocument,
    NodeResult,
    ScoreTable,
    Summarizer,
    TreeSpec,
    ViewGap,
    compare_runs,
    dimension_ids,
    load_tree,
    score_tree,
    score_tree_cli_json,
    tree_figures,
)
from corix.measurement.waves import WavesRequest, run_in_waves

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
