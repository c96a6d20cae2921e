"""Write docs/report.schema.json, the JSON Schema of report.json, from corix's model.

Run after changing ``corix.report.document``:
``PYTHONPATH=src python scripts/report_schema.py`` (a test fails until the file matches).
"""

from __future__ import annotations

import json
from pathlib import Path

from corix.report.document import report_json_schema

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "docs" / "report.schema.json"


def main() -> None:
    text = json.dumps(report_json_schema(), indent=1, ensure_ascii=False)
    SCHEMA_FILE.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}")


if __name__ == "__main__":
    main()
