"""What a report says, computed once and rendered three ways (HTML, Markdown, JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from corix.assessment import AnnotationSchema, HarmPack
from corix.domain import WrittenReportSettings
from corix.measurement import (
    CellCost,
    CorrectedRate,
    CorrelationMatrix,
    DefectRate,
    HitRate,
    MeasurementSpec,
    NodeResult,
    ResolvedSpec,
    ScoreTable,
    SequentialRecord,
    Settlement,
    SimulationGap,
    TreeSpec,
    ViewGap,
)
from corix.measurement.judges import JudgeAgreement
from corix.measurement.questionnaires import GroupComparison, ItemSummary
from corix.report.agreement import PairAgreement
from corix.report.history import RunLabel
from corix.report.labels import SOURCE_LABELS
from corix.report.provenance import AnnotatorSummary
from corix.report.sessions import SessionCatalog
from corix.storage import AnnotationJobRecord, MeasuredDialogue, RespondentSummary, StabilitySummary

DEFAULT_TREES = ("aria_pilot", "ai_rmf")


class ReportSettings(BaseModel):
    """How a report is computed.

    ``trees`` are shipped tree names or YAML paths. ``bootstrap`` replicates resample
    dialogues within each application (0: no intervals). ``transcripts_per_group`` caps
    the transcripts embedded per application × level × scenario. Annotator and user
    views more than ``view_gap`` scale units apart are flagged. ``compare_runs`` names
    the runs to compare over time (``None``: earlier runs sharing an application, at
    most ``history_limit``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    trees: tuple[str | Path, ...] = DEFAULT_TREES
    bootstrap: int = Field(default=1000, ge=0)
    seed: int = 0
    confidence: float = Field(default=0.95, ge=0, le=1)
    transcripts_per_group: int = Field(default=20, ge=0)
    view_gap: float = Field(default=2.0, ge=0)
    compare_runs: tuple[str, ...] | None = None
    history_limit: int = Field(default=5, ge=0)
    measurement: MeasurementSpec = Field(default_factory=MeasurementSpec)
    """Which annotators count and how they settle; its trees, bootstrap, seed and
    confidence are taken from the fields above, so the report states what it used."""
    measurement_source: str | None = None
    hit_k: int | None = Field(default=None, ge=1)
    """When set, attacker-style rates: hit@k per persona template × application."""
    simulation_delta: float = Field(default=0.10, gt=0, lt=1)
    """Simulation stands in for people in a cell when every rate difference's interval lies
    within ± this (the core's ``DEFAULT_DELTA``)."""

    def measurement_spec(self) -> MeasurementSpec:
        """The specification in force: ``measurement`` with this report's tree settings."""
        return self.measurement.model_copy(
            update={
                "trees": tuple(str(tree) for tree in self.trees),
                "bootstrap": self.bootstrap,
                "seed": self.seed,
                "confidence": self.confidence,
            }
        )


@dataclass(frozen=True)
class RunInfo:
    id: str
    name: str
    status: str
    seed: int
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class TreeSection:
    """One CoRIx tree scored for every application, and what is derived from it.

    ``application_correlations`` correlate the dimensions over applications (undefined
    below three). ``history`` maps an application to its run × dimension table when the
    report compares several runs.
    """

    spec: TreeSpec
    results: Mapping[str, NodeResult]
    dimensions: tuple[str, ...]
    comparison: ScoreTable
    views: tuple[ViewGap, ...]
    dialogue_correlations: CorrelationMatrix
    application_correlations: CorrelationMatrix
    history: Mapping[str, ScoreTable]
    source: str | None = None
    """The annotator source whose labels fill the tree (with every questionnaire answer);
    ``None`` when the run has no annotation labels."""
    warnings: tuple[str, ...] = ()
    """Questions the labels show are gated but the tree does not declare so."""

    @property
    def key(self) -> str:
        return self.spec.name if self.source is None else f"{self.spec.name}-{self.source}"

    @property
    def title(self) -> str:
        if self.source is None:
            return self.spec.title
        return f"{self.spec.title} · labels by {SOURCE_LABELS.get(self.source, self.source)}"


@dataclass(frozen=True)
class QuestionnaireSection:
    items: tuple[ItemSummary, ...]
    comparisons: tuple[GroupComparison, ...]


@dataclass(frozen=True)
class ReportContent:
    run: RunInfo
    settings: ReportSettings
    schema: AnnotationSchema
    applications: tuple[str, ...]
    scenarios: tuple[str, ...]
    levels: tuple[str, ...]
    n_leaves: int
    measurement: ResolvedSpec
    settlement: Settlement
    not_measurable: tuple[MeasuredDialogue, ...]
    trees: tuple[TreeSection, ...]
    violation_rates: tuple[DefectRate, ...]
    violation_totals: tuple[DefectRate, ...]
    """Violation rates pooled over scenarios and levels, per application × annotator."""
    defect_rates: tuple[DefectRate, ...]
    defect_totals: tuple[DefectRate, ...]
    """Defect rates pooled over scenarios and levels, per harm × application × annotator."""
    harm_packs: Mapping[str, HarmPack]
    questionnaire: QuestionnaireSection
    agreement: tuple[PairAgreement, ...]
    annotators: tuple[AnnotatorSummary, ...]
    annotation_jobs: tuple[AnnotationJobRecord, ...]
    """The settings each annotation job of the runs started with, in the order they ran."""
    respondents: tuple[RespondentSummary, ...]
    stability: tuple[StabilitySummary, ...]
    sessions: SessionCatalog
    history_runs: tuple[RunLabel, ...]
    run_ids: tuple[str, ...]
    """The runs measured: the report's run, or every run of its series."""
    series: str | None = None
    hit_rates: tuple[HitRate, ...] = ()
    """hit@k per annotator source × harm × application × level (``settings.hit_k``)."""
    sequential: tuple[SequentialRecord, ...] = ()
    """Each measured run that ran in waves: its stopping rule and each cell's dialogues,
    as its stored summary records them."""
    judge_corrected: tuple[CorrectedRate, ...] = ()
    """Each machine source's rates beside their correction for its error measured against
    people's labels on the dialogues both labelled (empty without people's labels)."""
    judge_agreement: tuple[JudgeAgreement, ...] = ()
    """Per harm, how far the LLM judge agrees with people (or the reference annotator):
    said beside its rates, with a warning when low."""
    cell_costs: tuple[CellCost, ...] = ()
    """Each application × scenario × level's calls, tokens and cost, by source."""
    simulation_gap: SimulationGap | None = None
    """Human against simulated testers per cell; ``None`` when no cell has both."""
    written: WrittenReportSettings | None = None
    """The settings the report was written with, as stored with its runs (``None`` for
    content shown without being written, e.g. in the web app)."""

    @property
    def headline(self) -> str:
        """The specification in force and what settling did, as every output prints it."""
        return f"{self.measurement.headline()}\n{self.settlement.text()}"

    def cell_violation_rates(self, cost: CellCost) -> list[DefectRate]:
        """The guardrail-violation rates of ``cost``'s cell, to show beside its cost."""
        return [
            rate
            for rate in self.violation_rates
            if all(rate.group.get(key, value) == value for key, value in cost.group.items())
        ]
