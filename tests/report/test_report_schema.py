"""docs/report.schema.json is the JSON Schema of the report model, kept in step with it."""

from __future__ import annotations

import json
from pathlib import Path

from corix.report.document import report_json_schema

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "report.schema.json"


def test_the_published_schema_is_the_models() -> None:
    committed = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert committed == report_json_schema(), (
        "docs/report.schema.json is stale: run `PYTHONPATH=src python scripts/report_schema.py`"
    )
