"""Computing a report's content from the stored record of one run."""

from __future__ import annotations

from collections.abc import Sequence

from corix.assessment import AnnotatorKind, RiskOrders
from corix.domain import Level
from corix.errors import CorixError
from corix.measurement import (
    GUARDRAIL_VIOLATION,
    CorrectedRate,
    LeafTable,
    Measurement,
    SimulationGap,
    TreeSpec,
    attack_rates,
    cell_costs,
    leaves_from_answers,
    load_tree,
    measure,
    sequential_records,
    simulation_gap_per_cell,
    stored_answers,
    tree_figures,
)
from corix.measurement.questionnaires import (
    GroupComparison,
    compare_groups,
    describe_items,
    questionnaire_items,
)
from corix.report.agreement import annotator_agreement
from corix.report.content import (
    QuestionnaireSection,
    ReportContent,
    ReportSettings,
    RunInfo,
    TreeSection,
)
from corix.report.history import history_tables, related_runs, run_label
from corix.report.progress import UNWATCHED, Progress
from corix.report.provenance import annotator_summaries
from corix.report.sessions import NoteSettling, collect_sessions
from corix.storage import (
    Database,
    RunRecord,
    annotation_jobs,
    get_run,
    respondent_summaries,
    series_runs,
    stability_summaries,
)


def build_report(
    db: Database, run_id: str, settings: ReportSettings, progress: Progress = UNWATCHED
) -> ReportContent:
    """Everything the report shows about ``run_id`` (which must exist); ``progress`` is told
    when the measurement, then each tree, is done."""
    run = get_run(db, run_id)
    info = RunInfo(
        id=run.id,
        name=run.name,
        status=run.status,
        seed=run.seed,
        created_at=run.created_at,
        finished_at=run.finished_at,
    )
    runs = related_runs(db, run_id, named=settings.compare_runs, limit=settings.history_limit)
    history = runs if len(runs) > 1 else []
    return _build(db, info, [run_id], settings, history, series=None, progress=progress)


def build_series_report(
    db: Database, series: str, settings: ReportSettings, progress: Progress = UNWATCHED
) -> ReportContent:
    """One report for an evaluation series: its automated runs and its human sessions,
    measured together (one tree and one defect table, annotator sources side by side)."""
    run_ids = series_runs(db, series)
    if not run_ids:
        raise CorixError(f"no evaluation series named '{series}' with runs")
    runs = [get_run(db, run_id) for run_id in run_ids]
    finished = [run.finished_at for run in runs if run.finished_at is not None]
    info = RunInfo(
        id=series,
        name=f"series {series} ({len(runs)} run{'' if len(runs) == 1 else 's'})",
        status="series",
        seed=settings.seed,
        created_at=min(run.created_at for run in runs),
        finished_at=max(finished) if len(finished) == len(runs) else None,
    )
    return _build(db, info, run_ids, settings, [], series=series, progress=progress)


def _build(
    db: Database,
    info: RunInfo,
    run_ids: Sequence[str],
    settings: ReportSettings,
    runs: Sequence[RunRecord],
    *,
    series: str | None,
    progress: Progress,
) -> ReportContent:
    measurement = measure(
        db, run_ids, settings.measurement_spec(), source=settings.measurement_source
    )
    schema = measurement.schema
    specs = [load_tree(tree) for tree in settings.trees]
    leaves = leaves_from_answers(stored_answers(measurement, db), origin=f"run {info.id}")
    sessions = collect_sessions(
        db,
        run_ids,
        per_group=settings.transcripts_per_group,
        settling=NoteSettling(
            measurement.spec.spec.settling, RiskOrders(schema, measurement.packs)
        ),
    )
    progress.advance()

    # Annotator sources side by side, never pooled: one tree per source, each with every
    # questionnaire answer (a run without labels gets one tree of questionnaires).
    sources: tuple[str | None, ...] = leaves.annotator_kinds() or (None,)
    trees = []
    for spec in specs:
        for source in sources:
            trees.append(_tree_section(db, spec, leaves, source, runs, settings))
        progress.advance()
    packs = measurement.packs
    by_cell = ("harm", "application", "scenario", "level")
    rates = measurement.rates(by=by_cell)
    totals = measurement.rates(by=("harm", "application"))
    return ReportContent(
        run=info,
        settings=settings,
        schema=schema,
        applications=tuple(sorted({entry.application for entry in sessions.entries})),
        scenarios=tuple(sorted({entry.scenario for entry in sessions.entries})),
        levels=_levels_in_order({entry.level for entry in sessions.entries}),
        n_leaves=len(leaves),
        trees=tuple(trees),
        measurement=measurement.spec,
        settlement=measurement.settlement,
        not_measurable=measurement.not_measurable,
        violation_rates=tuple(r for r in rates if r.group["harm"] == GUARDRAIL_VIOLATION),
        violation_totals=tuple(r for r in totals if r.group["harm"] == GUARDRAIL_VIOLATION),
        defect_rates=tuple(r for r in rates if r.group["harm"] != GUARDRAIL_VIOLATION),
        defect_totals=tuple(r for r in totals if r.group["harm"] != GUARDRAIL_VIOLATION),
        harm_packs={harm: packs[harm] for harm in measurement.harms if harm in packs},
        questionnaire=QuestionnaireSection(
            items=tuple(describe_items(leaves)), comparisons=tuple(_group_tests(leaves))
        ),
        agreement=tuple(annotator_agreement(measurement)),
        annotators=tuple(annotator_summaries(db, run_ids)),
        annotation_jobs=tuple(annotation_jobs(db, run_ids)),
        respondents=tuple(respondent_summaries(db, run_ids)),
        stability=tuple(stability_summaries(db, run_ids)),
        sessions=sessions,
        history_runs=tuple(run_label(r) for r in runs),
        run_ids=tuple(run_ids),
        series=series,
        hit_rates=(
            tuple(attack_rates(db, measurement, k=settings.hit_k))
            if settings.hit_k is not None
            else ()
        ),
        judge_corrected=tuple(judge_corrected_rates(measurement)),
        judge_agreement=tuple(measurement.judge_agreement()),
        sequential=tuple(sequential_records(db, run_ids)),
        cell_costs=tuple(cell_costs(db, run_ids)),
        simulation_gap=_simulation_gap(db, measurement, settings),
    )


def _simulation_gap(
    db: Database, measurement: Measurement, settings: ReportSettings
) -> SimulationGap | None:
    gap = simulation_gap_per_cell(db, measurement, delta=settings.simulation_delta)
    return gap if gap.cells else None


def judge_corrected_rates(measurement: Measurement) -> list[CorrectedRate]:
    """Every machine source's rates corrected against people's labels, where people
    labelled some of the same dialogues (``corix defects --correct-judge SOURCE``)."""
    people = AnnotatorKind.HUMAN.value
    sources = {verdict.kind for verdict in measurement.verdicts}
    if people not in sources:
        return []
    return [
        rate
        for judge in sorted(sources - {people})
        for rate in measurement.judge_corrected(judge, people)
    ]


def _tree_section(
    db: Database,
    spec: TreeSpec,
    all_leaves: LeafTable,
    source: str | None,
    runs: Sequence[RunRecord],
    settings: ReportSettings,
) -> TreeSection:
    leaves = all_leaves if source is None else all_leaves.for_annotator_kind(source)
    figures = tree_figures(
        spec,
        leaves,
        bootstrap=settings.bootstrap,
        seed=settings.seed,
        confidence=settings.confidence,
        view_gap=settings.view_gap,
    )
    history = (
        history_tables(db, runs, spec, figures.results, source, settings.measurement_spec())
        if runs
        else {}
    )
    return TreeSection(
        spec=spec,
        results=figures.results,
        dimensions=figures.dimensions,
        comparison=figures.comparison,
        views=figures.views,
        dialogue_correlations=figures.dialogue_correlations,
        application_correlations=figures.application_correlations,
        history=history,
        source=source,
        warnings=figures.warnings,
    )


def _group_tests(leaves: LeafTable) -> list[GroupComparison]:
    """Per numeric item: applications compared within each level, levels within each
    application; only comparisons with at least two groups."""
    tests = []
    for item in questionnaire_items(leaves):
        for level in leaves.level.categories:
            tests.append(compare_groups(leaves, item, by="application", where={"level": level}))
        for application in leaves.application.categories:
            tests.append(
                compare_groups(leaves, item, by="level", where={"application": application})
            )
    return [test for test in tests if len(test.groups) >= 2]


def _levels_in_order(levels: set[str]) -> tuple[str, ...]:
    order: Sequence[str] = [level.value for level in Level]
    return tuple(level for level in order if level in levels)
