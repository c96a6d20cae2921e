"""Reports: the CoRIx report of a run (HTML, Markdown, JSON), transcripts and exports.

``write_report(db, run_id, out_dir)`` computes everything a person needs to read a run —
CoRIx trees per application with bootstrap intervals, defect rates, questionnaire
statistics, agreement, trade-offs, and the sessions behind every number — and writes it
as a self-contained HTML file, Markdown and JSON.
"""

from corix.report._export_tables import TABLES, CsvTables, table_rows, write_measurement
from corix.report.build import build_report, build_series_report
from corix.report.content import DEFAULT_TREES, ReportContent, ReportSettings
from corix.report.dataset_card import write_dataset_card
from corix.report.export import export_jsonl
from corix.report.formatting import interval, node_notes, number, value_with_interval, words
from corix.report.html import render_html
from corix.report.json_doc import report_document
from corix.report.labels import annotator_label
from corix.report.progress import UNWATCHED, Progress
from corix.report.provenance import endpoint_text, repeats_text, targets_text
from corix.report.run_file import import_run_file, is_run_file, run_file_lines
from corix.report.spreadsheet import safe_folder, spreadsheet_safe
from corix.report.table_export import TableExport, write_table_export
from corix.report.transcripts import render_transcript
from corix.report.writer import ReportPaths, write_report, write_report_with
from corix.report.written import reused_settings, settings_text, stored_report

__all__ = [
    "DEFAULT_TREES",
    "TABLES",
    "UNWATCHED",
    "CsvTables",
    "Progress",
    "ReportContent",
    "ReportPaths",
    "ReportSettings",
    "TableExport",
    "annotator_label",
    "build_report",
    "build_series_report",
    "endpoint_text",
    "export_jsonl",
    "import_run_file",
    "interval",
    "is_run_file",
    "node_notes",
    "number",
    "render_html",
    "render_transcript",
    "repeats_text",
    "report_document",
    "reused_settings",
    "run_file_lines",
    "safe_folder",
    "settings_text",
    "spreadsheet_safe",
    "stored_report",
    "table_rows",
    "targets_text",
    "value_with_interval",
    "words",
    "write_dataset_card",
    "write_measurement",
    "write_report",
    "write_report_with",
    "write_table_export",
]
