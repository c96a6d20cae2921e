"""Export of a run as JSON Lines: one session per line, with turns and provenance."""

from __future__ import annotations

import json
from collections.abc import Iterator

from corix.storage import Repository


def export_jsonl(repo: Repository, run_id: str) -> Iterator[str]:
    """Stream a run's sessions; memory stays flat however large the run is."""
    for record in repo.iter_sessions(run_id):
        document = record.model_dump(mode="json")
        document["questionnaire"] = [a.model_dump() for a in repo.questionnaire(record.id)]
        yield json.dumps(document, ensure_ascii=False, sort_keys=True)
