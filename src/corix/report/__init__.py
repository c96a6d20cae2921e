"""Reports: the CoRIx report of a run (HTML, Markdown, JSON), transcripts and exports.

``write_report(db, run_id, out_dir)`` computes everything a person needs to read a run —
CoRIx trees per application with bootstrap intervals, defect rates, questionnaire
statistics, agreement, trade-offs, and the sessions behind every number — and writes it
as a self-contained HTML file, Markdown and JSON.
"""

from corix.report.build import build_report
from corix.report.content import DEFAULT_TREES, ReportContent, ReportSettings
from corix.report.export import export_jsonl
from corix.report.html import render_html
from corix.report.json_doc import report_document
from corix.report.markdown import render_markdown
from corix.report.transcripts import render_transcript
from corix.report.writer import ReportPaths, write_report

__all__ = [
    "DEFAULT_TREES",
    "ReportContent",
    "ReportPaths",
    "ReportSettings",
    "build_report",
    "export_jsonl",
    "render_html",
    "render_markdown",
    "render_transcript",
    "report_document",
    "write_report",
]
