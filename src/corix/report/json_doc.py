"""The report as one JSON document (:class:`ReportDocument`), built from its content.

Trees are given as ``corix tree score --json`` gives them (one root per application),
with the dialogue ids behind every node. Empty values are ``null``, never 0.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from corix.measurement import CorrelationMatrix, ScoreTable
from corix.report.content import ReportContent, TreeSection
from corix.report.document import (
    AnnotationJobPart,
    ComparisonPart,
    CorrelationsPart,
    HarmPackPart,
    HistoryPart,
    MeasurementPart,
    NotMeasurablePart,
    PairAgreementPart,
    QuestionnairePart,
    ReportDocument,
    RunPart,
    ScalePart,
    SessionPart,
    SettingsPart,
    TreeCorrelationsPart,
    TreePart,
)


def _settings(content: ReportContent) -> SettingsPart:
    """What the report was computed with; once it is written, also what it measured and
    compared, its digest, when, by which corix, and where (as stored with its runs)."""
    settings = content.settings
    computed = SettingsPart(
        trees=[str(tree) for tree in settings.trees],
        bootstrap=settings.bootstrap,
        seed=settings.seed,
        confidence=settings.confidence,
        transcripts_per_group=settings.transcripts_per_group,
        view_gap=settings.view_gap,
    )
    written = content.written
    if written is None:
        return computed
    return computed.model_copy(
        update={
            "digest": written.digest,
            "runs": list(written.runs),
            "series": written.series,
            "compare_runs": None if written.compare_runs is None else list(written.compare_runs),
            "compared_runs": list(written.compared_runs),
            "written_at": written.written_at.isoformat(),
            "corix_version": written.corix_version,
            "outputs": list(written.outputs),
        }
    )


def report_document(content: ReportContent) -> ReportDocument:
    run = content.run
    return ReportDocument(
        run=RunPart(
            id=run.id,
            name=run.name,
            status=run.status,
            seed=run.seed,
            created_at=run.created_at.isoformat(),
            finished_at=run.finished_at.isoformat() if run.finished_at else None,
        ),
        settings=_settings(content),
        measurement=MeasurementPart(
            digest=content.measurement.digest,
            headline=content.headline,
            **content.measurement.model_dump(),
            settlement=content.settlement,
        ),
        not_measurable=[
            NotMeasurablePart(
                session=dialogue.session_id,
                application=dialogue.application,
                reason=dialogue.not_measurable,
            )
            for dialogue in content.not_measurable
        ],
        applications=list(content.applications),
        scenarios=list(content.scenarios),
        levels=list(content.levels),
        n_leaves=content.n_leaves,
        annotators=list(content.annotators),
        annotation_jobs=[
            AnnotationJobPart(
                run=job.run_id, started_at=job.started_at.isoformat(), **job.settings.model_dump()
            )
            for job in content.annotation_jobs
        ],
        respondents=list(content.respondents),
        trees={section.key: _tree(section) for section in content.trees},
        history_runs=list(content.history_runs),
        violation_rates=list(content.violation_rates),
        violation_totals=list(content.violation_totals),
        defect_rates=list(content.defect_rates),
        defect_totals=list(content.defect_totals),
        hit_at_k=list(content.hit_rates),
        sequential=list(content.sequential),
        cell_costs=list(content.cell_costs),
        judge_corrected=list(content.judge_corrected),
        judge_agreement=list(content.judge_agreement),
        simulation_gap=content.simulation_gap,
        harm_packs={
            harm: HarmPackPart(
                title=pack.title,
                version=pack.version,
                threshold=pack.defect.threshold,
                direction=pack.defect.direction.value,
            )
            for harm, pack in content.harm_packs.items()
        },
        questionnaire=QuestionnairePart(
            items=list(content.questionnaire.items),
            comparisons=list(content.questionnaire.comparisons),
        ),
        agreement=[
            PairAgreementPart(a=pair.a, b=pair.b, questions=list(pair.reports))
            for pair in content.agreement
        ],
        stability=list(content.stability),
        sessions=[
            SessionPart(
                id=entry.id,
                application=entry.application,
                scenario=entry.scenario,
                level=entry.level,
                source=entry.source,
                turns=entry.n_turns,
                failed_turns=entry.n_failed_turns,
                cut_turns=entry.n_cut_turns,
                end_reason=entry.end_reason,
                transcript_embedded=entry.transcript is not None,
            )
            for entry in content.sessions.entries
        ],
    )


def _tree(section: TreeSection) -> TreePart:
    spec = section.spec
    return TreePart(
        title=spec.title,
        tree=spec.name,
        annotator_source=section.source,
        scale=ScalePart(min=spec.scale.low, max=spec.scale.high),
        dimensions=list(section.dimensions),
        applications={app: root.document() for app, root in section.results.items()},
        comparison=ComparisonPart(
            rows=list(section.comparison.rows),
            columns=list(section.comparison.columns),
            values=_grid(section.comparison.values),
            n=section.comparison.n.tolist(),
        ),
        views=list(section.views),
        warnings=list(section.warnings),
        correlations=TreeCorrelationsPart(
            dialogues=_matrix(section.dialogue_correlations),
            applications=_matrix(section.application_correlations),
        ),
        history={app: _history(table) for app, table in section.history.items()},
    )


def _history(table: ScoreTable) -> HistoryPart:
    return HistoryPart(
        runs=list(table.rows),
        nodes=list(table.columns),
        values=_grid(table.values),
        n=table.n.tolist(),
    )


def _matrix(matrix: CorrelationMatrix) -> CorrelationsPart:
    return CorrelationsPart(
        names=list(matrix.names),
        rho=_grid(matrix.rho),
        p_value=_grid(matrix.p_value),
        n=matrix.n.tolist(),
    )


def _grid(values: npt.NDArray[np.float64]) -> list[list[float | None]]:
    """A table of numbers with NaN (empty) as ``None``."""
    return [[None if math.isnan(v) else v for v in row] for row in values.tolist()]
