"""Reports: transcripts, exports and HTML pages a person opens offline."""

from corix.report.export import export_jsonl
from corix.report.sessions_page import write_sessions_page
from corix.report.transcripts import render_transcript

__all__ = ["export_jsonl", "render_transcript", "write_sessions_page"]
