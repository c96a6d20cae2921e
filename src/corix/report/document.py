"""The JSON report's schema: one pydantic model that writes ``report.json`` and reads it.

``docs/report.schema.json`` is this model's JSON Schema, for programs that read the report
without corix; ``scripts/report_schema.py`` writes it again after the model changed (a
test keeps the committed file equal to the model's). Sections whose shape belongs to the
measurement core (CoRIx node results, settlement, view gaps, questionnaire comparisons)
are its own records; a CoRIx node has only the keys it has a value for. Empty values are
``null``, never 0, and so is a number that is not one (NaN).
"""

from __future__ import annotations

import json
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from corix.assessment.agreement import AgreementReport
from corix.domain import AnnotationJobSettings, JsonObject, JsonSchema, ReportOutput, ReportTree
from corix.measurement import (
    CellCost,
    CorrectedRate,
    DefectRate,
    HitRate,
    MeasurementSpec,
    NodeDocument,
    SequentialRecord,
    Settlement,
    SimulationGap,
    ViewGap,
)
from corix.measurement.judges import JudgeAgreement
from corix.measurement.questionnaires import GroupComparison, ItemSummary
from corix.report.history import RunLabel
from corix.report.provenance import AnnotatorSummary
from corix.storage import RespondentSummary, StabilitySummary

__all__ = ["FORMAT", "REPORT_SCHEMA_VERSION", "ReportDocument", "report_json_schema"]

FORMAT: Final = "corix.report/1"
REPORT_SCHEMA_VERSION = 1


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RunPart(_Part):
    id: str
    name: str
    status: str
    seed: int
    created_at: str
    finished_at: str | None


class SettingsPart(_Part):
    """What the report was computed with; once written, also what it measured and
    compared, its digest, when, by which corix and where (absent for a report shown
    without being written, e.g. in the web app)."""

    trees: list[str]
    bootstrap: int
    seed: int
    confidence: float
    transcripts_per_group: int
    view_gap: float
    digest: str | None = None
    runs: list[str] | None = None
    series: str | None = None
    compare_runs: list[str] | None = None
    compared_runs: list[str] | None = None
    written_at: str | None = None
    corix_version: str | None = None
    outputs: list[ReportOutput] | None = None


WRITTEN_KEYS = frozenset(SettingsPart.model_fields) - {
    "trees",
    "bootstrap",
    "seed",
    "confidence",
    "transcripts_per_group",
    "view_gap",
}


class MeasurementPart(_Part):
    """The specification in force, as applied, and what settling did."""

    digest: str
    headline: str
    spec: MeasurementSpec
    trees: list[ReportTree]
    corix_version: str
    source: str | None
    settlement: Settlement


class NotMeasurablePart(_Part):
    session: str
    application: str
    reason: str | None


class AnnotationJobPart(AnnotationJobSettings):
    """One ``corix annotate`` invocation on a measured run, with the settings it began with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run: str
    started_at: str


class ScalePart(_Part):
    min: float
    max: float


class CorrelationsPart(_Part):
    """Spearman's rho between a tree's dimensions, its p-values and the pairs behind each."""

    names: list[str]
    rho: list[list[float | None]]
    p_value: list[list[float | None]]
    n: list[list[int]]


class TreeCorrelationsPart(_Part):
    dialogues: CorrelationsPart
    applications: CorrelationsPart


class ComparisonPart(_Part):
    """A node × application grid: ``values[i][j]`` of node ``rows[i]`` for application
    ``columns[j]`` (``null``: empty), on ``n[i][j]`` dialogues."""

    rows: list[str]
    columns: list[str]
    values: list[list[float | None]]
    n: list[list[int]]


class HistoryPart(_Part):
    """One application's nodes over the series' runs: ``values[i][j]`` of node
    ``nodes[j]`` in run ``runs[i]`` (``null``: empty), on ``n[i][j]`` dialogues."""

    runs: list[str]
    nodes: list[str]
    values: list[list[float | None]]
    n: list[list[int]]


class TreePart(_Part):
    """One CoRIx tree: per application its root as ``corix tree score --json`` gives it."""

    title: str
    tree: str
    annotator_source: str | None
    """The annotator source whose labels fill the tree (`null`: the run has no labels)."""
    scale: ScalePart
    dimensions: list[str]
    applications: dict[str, NodeDocument]
    comparison: ComparisonPart
    views: list[ViewGap]
    warnings: list[str]
    correlations: TreeCorrelationsPart
    history: dict[str, HistoryPart]


class HarmPackPart(_Part):
    title: str
    version: str
    threshold: int
    direction: str


class QuestionnairePart(_Part):
    items: list[ItemSummary]
    comparisons: list[GroupComparison]


class PairAgreementPart(_Part):
    a: str
    b: str
    questions: list[AgreementReport]


class SessionPart(_Part):
    id: str
    application: str
    scenario: str
    level: str
    source: str
    turns: int
    failed_turns: int
    cut_turns: int
    end_reason: str | None
    transcript_embedded: bool


class ReportDocument(_Part):
    """The report for programs: every number with its n and interval, the dialogue ids
    behind it, and the settings and specification that made it."""

    # A statistic that is not a number (a test on tied answers) is written null: JSON has
    # no NaN.
    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="null")

    format: Literal["corix.report/1"] = FORMAT
    schema_version: int = Field(
        default=REPORT_SCHEMA_VERSION, description="bumped when a key changes meaning or goes"
    )
    run: RunPart
    settings: SettingsPart
    measurement: MeasurementPart
    not_measurable: list[NotMeasurablePart]
    applications: list[str]
    scenarios: list[str]
    levels: list[str]
    n_leaves: int
    annotators: list[AnnotatorSummary]
    annotation_jobs: list[AnnotationJobPart]
    respondents: list[RespondentSummary]
    trees: dict[str, TreePart]
    history_runs: list[RunLabel]
    violation_rates: list[DefectRate]
    violation_totals: list[DefectRate]
    defect_rates: list[DefectRate]
    defect_totals: list[DefectRate]
    hit_at_k: list[HitRate]
    sequential: list[SequentialRecord]
    cell_costs: list[CellCost]
    judge_corrected: list[CorrectedRate]
    judge_agreement: list[JudgeAgreement] = []
    simulation_gap: SimulationGap | None = Field(
        default=None, description="human against simulated testers per cell; null without both"
    )
    harm_packs: dict[str, HarmPackPart]
    questionnaire: QuestionnairePart
    agreement: list[PairAgreementPart]
    stability: list[StabilitySummary]
    sessions: list[SessionPart]

    def to_json(self) -> JsonObject:
        """The document as ``report.json`` holds it: the written-only settings are left
        out of a report that was not written."""
        document: JsonObject = json.loads(self.model_dump_json())
        if self.settings.digest is None:
            for key in WRITTEN_KEYS:
                del document["settings"][key]
        return document


def report_json_schema() -> JsonSchema:
    """The JSON Schema ``report.json`` validates against (``docs/report.schema.json``)."""
    schema = ReportDocument.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
