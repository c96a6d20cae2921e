"""Writing a run's report: HTML for people, Markdown for reviews, JSON for programs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from corix.config import write_atomically
from corix.measurement import MeasurementSpec
from corix.report.build import build_report, build_series_report
from corix.report.content import DEFAULT_TREES, ReportSettings
from corix.report.html import render_html
from corix.report.json_doc import report_document
from corix.report.markdown import render_markdown
from corix.report.progress import UNWATCHED, Progress
from corix.report.written import written_settings
from corix.storage import Database, record_written_report

HTML_NAME = "report.html"
MARKDOWN_NAME = "report.md"
JSON_NAME = "report.json"


@dataclass(frozen=True)
class ReportPaths:
    html: Path
    markdown: Path
    json: Path


def write_report(
    db: Database,
    run_id: str,
    out_dir: Path,
    *,
    trees: Sequence[str | Path] = DEFAULT_TREES,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    transcripts_per_group: int = 20,
    compare_runs: Sequence[str] | None = None,
    measurement: MeasurementSpec | None = None,
    measurement_source: str | None = None,
    series: str | None = None,
    hit_k: int | None = None,
    simulation_delta: float = 0.10,
    progress: Progress = UNWATCHED,
) -> ReportPaths:
    """Compute the report of ``run_id`` and write it into ``out_dir`` (created if needed).

    ``trees`` are shipped tree names or YAML paths. ``compare_runs`` names the runs to
    compare over time; by default, earlier runs in the same database that share an
    application with this one. ``measurement`` says which annotators count and how they
    settle (its tree and interval fields are replaced by the arguments above);
    ``measurement_source`` names the file it was read from. With ``series``, the report
    covers every run of that evaluation series (``run_id`` is then ignored).
    ``simulation_delta``: simulated testers stand in for people in a cell when every rate
    difference's interval lies within ± this.

    The report states the settings it was written with, and they are stored with every
    run it covers (``corix runs show`` lists them) once its files are written.
    ``progress`` counts the report's parts: the measurement, each tree, each file.
    """
    settings = ReportSettings(
        trees=tuple(trees),
        bootstrap=bootstrap,
        seed=seed,
        confidence=confidence,
        transcripts_per_group=transcripts_per_group,
        compare_runs=tuple(compare_runs) if compare_runs is not None else None,
        measurement=measurement or MeasurementSpec(),
        measurement_source=measurement_source,
        hit_k=hit_k,
        simulation_delta=simulation_delta,
    )
    return write_report_with(db, run_id, out_dir, settings, series=series, progress=progress)


def write_report_with(
    db: Database,
    run_id: str,
    out_dir: Path,
    settings: ReportSettings,
    *,
    series: str | None = None,
    progress: Progress = UNWATCHED,
) -> ReportPaths:
    """:func:`write_report` with its settings given as one typed object."""
    progress.planned(1 + len(settings.trees) + 3)
    if series is not None:
        content = build_series_report(db, series, settings, progress)
    else:
        content = build_report(db, run_id, settings, progress)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = ReportPaths(out_dir / HTML_NAME, out_dir / MARKDOWN_NAME, out_dir / JSON_NAME)
    written = written_settings(
        content,
        (("html", paths.html), ("markdown", paths.markdown), ("json", paths.json)),
        written_at=datetime.now(UTC),
    )
    content = replace(content, written=written)
    write_atomically(paths.html, render_html(content))
    progress.advance()
    write_atomically(paths.markdown, render_markdown(content))
    progress.advance()
    document = report_document(content).to_json()
    write_atomically(paths.json, json.dumps(document, ensure_ascii=False, indent=1))
    progress.advance()
    record_written_report(db, written)
    return paths
