"""Export of a run as flat CSV tables, one file each, for a team's own pipeline.

``sessions.csv``, ``turns.csv`` and ``questionnaire.csv`` stream from the database in
batches (memory stays flat); ``passes.csv`` has one row per stored answer with its
annotator, kind, guideline version, pass, repeat and status; ``settled_labels.csv`` the
measurement core's settled labels under the specification written beside them in
``measurement.json``; ``resolutions.csv`` the senior resolutions. Text is written as is
(CSV quoting makes any reply safe to read back).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from corix.measurement.core import Measurement
from corix.storage import Repository
from corix.storage.annotations import load_passes
from corix.storage.measured import stored_resolutions

_BATCH = 500

SESSION_COLUMNS = (
    "session_id", "run_id", "application", "scenario", "level", "source", "status",
    "end_reason", "end_detail", "persona", "strategy", "first_success_turn", "template",
    "started_at", "ended_at",
)  # fmt: skip
TURN_COLUMNS = (
    "session_id", "turn", "user_text", "response_text", "error", "latency_ms",
    "prompt_tokens", "completion_tokens", "finish_reason",
)  # fmt: skip
QUESTIONNAIRE_COLUMNS = ("session_id", "item_id", "value", "text")
PASS_COLUMNS = (
    "pass_id", "session_id", "category", "annotator", "annotator_kind", "guideline_version",
    "pass_no", "repeat_no", "status", "error", "question_id", "turn", "value", "reasoning",
)  # fmt: skip
LABEL_COLUMNS = (
    "session_id", "application", "scenario", "level", "annotator", "annotator_kind",
    "category", "question_id", "turn", "value", "n_values", "tie", "resolved", "settling",
    "measurement",
)  # fmt: skip
RESOLUTION_COLUMNS = ("session_id", "category", "question_id", "turn", "status", "value")

__all__ = ["export_tables"]


def export_tables(
    repo: Repository, run_id: str, measurement: Measurement, out_dir: Path
) -> dict[str, int]:
    """Write every table of ``run_id`` into ``out_dir``; return the rows written per file."""
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {
        "sessions.csv": 0,
        "turns.csv": 0,
        "questionnaire.csv": 0,
    }
    with (
        _writer(out_dir / "sessions.csv", SESSION_COLUMNS) as sessions,
        _writer(out_dir / "turns.csv", TURN_COLUMNS) as turns,
        _writer(out_dir / "questionnaire.csv", QUESTIONNAIRE_COLUMNS) as answers,
    ):
        records = repo.iter_sessions(run_id, batch_size=_BATCH)
        while batch := list(islice(records, _BATCH)):
            questionnaires = repo.questionnaires([record.id for record in batch])
            for record in batch:
                sessions.writer.writerow(
                    [
                        record.id,
                        record.run_id,
                        record.application,
                        record.scenario,
                        record.level.value,
                        record.source.value,
                        record.status.value,
                        record.end_reason.value if record.end_reason else "",
                        record.end_detail,
                        record.persona,
                        record.strategy,
                        record.first_success_turn,
                        record.provenance.template,
                        record.started_at,
                        record.ended_at,
                    ]
                )
                counts["sessions.csv"] += 1
                for turn in record.turns:
                    turns.writer.writerow(
                        [
                            record.id,
                            turn.index,
                            turn.user_text,
                            turn.response_text,
                            turn.error,
                            turn.latency_ms,
                            turn.prompt_tokens,
                            turn.completion_tokens,
                            turn.meta.get("finish_reason"),
                        ]
                    )
                    counts["turns.csv"] += 1
                for answer in questionnaires.get(record.id, []):
                    answers.writer.writerow([record.id, answer.item_id, answer.value, answer.text])
                    counts["questionnaire.csv"] += 1
    counts["passes.csv"] = _write(out_dir / "passes.csv", PASS_COLUMNS, _pass_rows(repo, run_id))
    counts["settled_labels.csv"] = _write(
        out_dir / "settled_labels.csv", LABEL_COLUMNS, _label_rows(measurement)
    )
    counts["resolutions.csv"] = _write(
        out_dir / "resolutions.csv", RESOLUTION_COLUMNS, _resolution_rows(repo, measurement)
    )
    document = {"digest": measurement.spec.digest, **measurement.spec.model_dump(mode="json")}
    (out_dir / "measurement.json").write_text(json.dumps(document, indent=1), encoding="utf-8")
    return counts


class _writer:
    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        self._handle = path.open("w", newline="", encoding="utf-8", errors="replace")
        self.writer = csv.writer(self._handle)
        self.writer.writerow(columns)

    def __enter__(self) -> _writer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._handle.close()


def _write(path: Path, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    count = 0
    with _writer(path, columns) as table:
        for row in rows:
            table.writer.writerow(row)
            count += 1
    return count


def _pass_rows(repo: Repository, run_id: str) -> Iterable[Sequence[Any]]:
    for stored in load_passes(repo.db, run_id=run_id):
        guideline = stored.provenance.get("guideline_version")
        head = [
            stored.id,
            stored.session_id,
            stored.category,
            stored.annotator,
            stored.annotator_kind,
            guideline,
            stored.pass_no,
            stored.repeat_no,
            stored.status,
            stored.error,
        ]
        if not stored.answers:
            yield [*head, None, None, None, None]
        for answer in stored.answers:
            yield [*head, answer.question_id, answer.turn_index, answer.value, answer.reasoning]


def _label_rows(measurement: Measurement) -> Iterable[Sequence[Any]]:
    rule = measurement.spec.spec.settling
    for label in measurement.labels:
        dialogue = label.dialogue
        for value in label.settled.values:
            yield [
                dialogue.session_id,
                dialogue.application,
                dialogue.scenario,
                dialogue.level,
                label.annotator,
                label.kind,
                label.category,
                label.question,
                label.turn_index,
                value,
                label.settled.n_values,
                label.settled.tie,
                label.resolved,
                rule,
                measurement.spec.digest,
            ]


def _resolution_rows(repo: Repository, measurement: Measurement) -> Iterable[Sequence[Any]]:
    sessions = [dialogue.session_id for dialogue in measurement.dialogues]
    for found in stored_resolutions(repo.db, sessions):
        yield [
            found.session_id,
            found.category,
            found.question_id,
            found.turn_index,
            found.status,
            found.value,
        ]
