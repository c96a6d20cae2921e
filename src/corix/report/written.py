"""The settings a written report states and stores, and their summary in words.

``write_report`` makes the record once, from the computed content and the files it writes;
the report prints it, and storage keeps it with every run the report covers, so
``corix runs show`` lists the reports made of a run with the same words, and
``corix report --settings-of`` writes a report again with the settings of one of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from corix.domain import ReportFormat, ReportOutput, ReportTree, WrittenReportSettings
from corix.errors import CorixError
from corix.measurement import ResolvedSpec, resolve_spec
from corix.report.content import ReportContent, ReportSettings
from corix.storage import Database, series_runs, written_reports

LATEST = "latest"


def written_settings(
    content: ReportContent,
    outputs: Sequence[tuple[ReportFormat, Path]],
    written_at: datetime,
) -> WrittenReportSettings:
    """What decided ``content``: its settings as applied, the runs it measured and compared,
    the measurement specification in force; and where and when it was written."""
    settings = content.settings
    measured = set(content.run_ids)
    return WrittenReportSettings(
        runs=content.run_ids,
        series=content.series,
        trees=tuple(
            ReportTree(tree=ref.tree, sha256=ref.sha256) for ref in content.measurement.trees
        ),
        bootstrap=settings.bootstrap,
        seed=settings.seed,
        confidence=settings.confidence,
        transcripts_per_group=settings.transcripts_per_group,
        view_gap=settings.view_gap,
        compare_runs=settings.compare_runs,
        compared_runs=tuple(run.id for run in content.history_runs if run.id not in measured),
        measurement=content.measurement.model_dump(mode="json", exclude={"source"}),
        measurement_digest=content.measurement.digest,
        measurement_source=content.measurement.source,
        simulation_delta=settings.simulation_delta,
        corix_version=content.measurement.corix_version,
        written_at=written_at,
        outputs=tuple(
            ReportOutput(format=kind, path=str(path.resolve())) for kind, path in outputs
        ),
    )


def settings_text(settings: WrittenReportSettings) -> str:
    """The settings a report was made with, in one line (the measurement has its own)."""
    trees = ", ".join(f"{tree.tree} (sha256 {tree.sha256[:12]})" for tree in settings.trees)
    replicates = f"{settings.bootstrap} bootstrap replicate{'s' if settings.bootstrap != 1 else ''}"
    parts = [
        f"trees {trees}",
        f"{replicates}, seed {settings.seed}, {settings.confidence:.0%} intervals",
        f"{settings.transcripts_per_group} transcripts per application × level × scenario",
    ]
    if settings.compared_runs:
        asked = (
            "as asked"
            if settings.compare_runs is not None
            else "earlier runs sharing an application"
        )
        parts.append(f"compared with {', '.join(settings.compared_runs)} ({asked})")
    return "; ".join(parts)


def settings_line(settings: WrittenReportSettings) -> str:
    """The line a report states itself with: which settings, when, by which corix."""
    line = (
        f"Report settings {settings.digest}, written {settings.written_at:%Y-%m-%d %H:%M:%S} "
        f"UTC by corix {settings.corix_version}: {settings_text(settings)}"
    )
    if settings.series is not None:
        line += f"; series {settings.series}, runs {', '.join(settings.runs)}"
    return line


def stored_report(
    db: Database, run_id: str | None, series: str | None, which: str
) -> WrittenReportSettings:
    """The settings of a report written of ``run_id`` (or of ``series``): the ``latest``,
    or the latest whose settings digest starts with ``which``."""
    run_ids = series_runs(db, series) if series is not None else [run_id or ""]
    reports = {
        report.report_id: report.settings
        for report in written_reports(db, run_ids)
        if report.settings.series == series
    }
    matching = [s for s in reports.values() if which == LATEST or s.digest.startswith(which)]
    if not matching:
        of = f"series {series}" if series is not None else f"run {run_id}"
        known = ", ".join(dict.fromkeys(s.digest for s in reversed(reports.values()))) or "none"
        raise CorixError(f"no report of {of} has settings '{which}' (written: {known})")
    return matching[-1]


def reused_settings(stored: WrittenReportSettings) -> ReportSettings:
    """The settings to write ``stored``'s report again: the same trees, intervals, runs
    compared (as resolved then) and measurement specification. A tree file edited since
    would score differently, so it is refused rather than silently used."""
    in_force = ResolvedSpec.model_validate(stored.measurement)
    now = resolve_spec(in_force.spec)
    changed = [
        then.tree
        for then, current in zip(in_force.trees, now.trees, strict=True)
        if then.sha256 != current.sha256
    ]
    if changed:
        raise CorixError(
            f"tree {', '.join(changed)} has changed since report {stored.digest} was written "
            "(its SHA-256 differs); restore it or give the settings as flags"
        )
    return ReportSettings(
        trees=tuple(tree.tree for tree in stored.trees),
        bootstrap=stored.bootstrap,
        seed=stored.seed,
        confidence=stored.confidence,
        transcripts_per_group=stored.transcripts_per_group,
        view_gap=stored.view_gap,
        compare_runs=stored.compared_runs,
        measurement=in_force.spec,
        measurement_source=stored.measurement_source,
        simulation_delta=stored.simulation_delta,
    )
