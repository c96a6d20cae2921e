"""A run's (or a series') record as flat tables, for a team's own pipeline and for releases.

:func:`table_rows` streams rows of six tables, interleaved, each row a mapping of column
to value: ``sessions`` (with the tester), ``turns``, ``questionnaire`` (with the
respondent), ``passes`` (one row per stored answer with its annotator, kind, guideline
version, pass, repeat and status), ``settled_labels`` (the measurement core's settled
labels, one per annotator, under the specification the export writes beside them) and
``resolutions``. A turn of a tool-using application keeps every step (system messages,
tool calls and their results) in ``turns.messages``, as JSON of OpenAI chat messages.
Sessions, turns, answers and passes stream from the database in batches,
and settled labels and resolutions a chunk of sessions at a time when the labels come
from a :class:`~corix.measurement.core.ChunkedMeasurement`, so memory stays flat however
large the record; the CSV, Parquet, dataset-folder and release writers all consume the
same rows.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from datetime import datetime
from itertools import groupby, islice
from operator import attrgetter
from pathlib import Path
from types import TracebackType
from typing import Any

from corix.config import atomic_open, write_atomically
from corix.domain import JsonObject, TurnRecord, render_steps
from corix.measurement import SettledChunk, SettledChunks
from corix.report.export_parquet import ColumnType, ParquetTables
from corix.report.progress import UNWATCHED, Progress
from corix.report.spreadsheet import spreadsheet_safe
from corix.storage import (
    Database,
    as_utc,
    count_complete_sessions,
    iter_sessions,
    load_passes,
    questionnaire_answers,
    respondent_name,
    session_testers,
    stored_resolutions,
    usernames,
)

_BATCH = 500

TABLES: dict[str, tuple[str, ...]] = {
    "sessions": (
        "session_id", "run_id", "application", "scenario", "level", "source", "status",
        "end_reason", "end_detail", "persona", "strategy", "first_success_turn", "template",
        "tester", "started_at", "ended_at",
    ),
    "turns": (
        "session_id", "turn", "user_text", "response_text", "error", "latency_ms",
        "prompt_tokens", "completion_tokens", "finish_reason", "steps", "messages",
    ),
    "questionnaire": ("session_id", "respondent", "simulated", "item_id", "value", "text"),
    "passes": (
        "pass_id", "session_id", "category", "annotator", "annotator_kind",
        "guideline_version", "pass_no", "repeat_no", "status", "error", "question_id", "turn",
        "value", "reasoning",
    ),
    "settled_labels": (
        "session_id", "application", "scenario", "level", "annotator", "annotator_kind",
        "category", "question_id", "turn", "value", "n_values", "tie", "resolved", "settling",
        "measurement",
    ),
    "resolutions": ("session_id", "category", "question_id", "turn", "status", "value"),
}  # fmt: skip
"""Every table and its columns, in the order they are written."""

TABLE_TYPES: dict[str, dict[str, ColumnType]] = {
    "sessions": {"first_success_turn": "int", "started_at": "timestamp", "ended_at": "timestamp"},
    "turns": {
        "turn": "int", "latency_ms": "float", "prompt_tokens": "int", "completion_tokens": "int",
    },
    "questionnaire": {"simulated": "bool", "value": "float"},
    "passes": {"pass_id": "int", "pass_no": "int", "repeat_no": "int", "turn": "int"},
    "settled_labels": {"turn": "int", "n_values": "int", "tie": "bool", "resolved": "bool"},
    "resolutions": {"turn": "int"},
}  # fmt: skip
"""The columns typed formats (Parquet, hf) write as numbers, booleans or UTC timestamps;
every other column is text. An answer's ``value`` in passes, settled labels and resolutions
is a label or a number by question, so it stays text."""

Row = JsonObject

__all__ = [
    "TABLES",
    "TABLE_TYPES",
    "CsvTables",
    "Row",
    "export_tables",
    "table_rows",
    "write_measurement",
]


def _turn_steps(turn: TurnRecord) -> Row:
    """A tool-using turn's steps: readable (``steps``, one ``label: text`` line each) and
    whole (``messages``, OpenAI's JSON); both empty for a plain turn, whose two texts are
    all of it."""
    if turn.messages is None:
        return {"steps": None, "messages": None}
    return {
        "steps": render_steps(turn.messages, blinded=False),
        "messages": json.dumps([m.to_openai() for m in turn.messages], ensure_ascii=False),
    }


def table_rows(
    db: Database, measurement: SettledChunks, progress: Progress = UNWATCHED
) -> Iterator[tuple[str, Row]]:
    """``(table, row)`` for every row of the measured runs, streamed; ``progress`` counts
    the complete sessions whose record rows are out (settled labels follow them)."""
    names = usernames(db)
    progress.planned(count_complete_sessions(db, measurement.run_ids))
    for run_id in measurement.run_ids:
        records = iter_sessions(db, run_id, batch_size=_BATCH)
        while batch := list(islice(records, _BATCH)):
            ids = [record.id for record in batch]
            answers = {
                session_id: list(found)
                for session_id, found in groupby(
                    questionnaire_answers(db, ids), key=attrgetter("session_id")
                )
            }
            testers = session_testers(db, ids)
            for record in batch:
                tester = testers.get(record.id)
                yield (
                    "sessions",
                    {
                        "session_id": record.id,
                        "run_id": record.run_id,
                        "application": record.application,
                        "scenario": record.scenario,
                        "level": record.level.value,
                        "source": record.source.value,
                        "status": record.status.value,
                        "end_reason": record.end_reason.value if record.end_reason else None,
                        "end_detail": record.end_detail,
                        "persona": record.persona,
                        "strategy": record.strategy,
                        "first_success_turn": record.first_success_turn,
                        "template": record.provenance.template,
                        "tester": names.get(tester, str(tester)) if tester else None,
                        "started_at": _utc(record.started_at),
                        "ended_at": _utc(record.ended_at),
                    },
                )
                for turn in record.turns:
                    yield (
                        "turns",
                        {
                            "session_id": record.id,
                            "turn": turn.index,
                            "user_text": turn.user_text,
                            "response_text": turn.response_text,
                            "error": turn.error,
                            "latency_ms": turn.latency_ms,
                            "prompt_tokens": turn.prompt_tokens,
                            "completion_tokens": turn.completion_tokens,
                            "finish_reason": turn.meta.get("finish_reason"),
                            **_turn_steps(turn),
                        },
                    )
                for answer in answers.get(record.id, []):
                    yield (
                        "questionnaire",
                        {
                            "session_id": record.id,
                            "respondent": respondent_name(answer, names),
                            "simulated": answer.simulated,
                            "item_id": answer.item_id,
                            "value": answer.value,
                            "text": answer.text,
                        },
                    )
                progress.advance()
            yield from _pass_rows(db, ids)
    rule, digest = measurement.spec.spec.settling, measurement.spec.digest
    for chunk in measurement.chunks():
        yield from _label_rows(chunk, rule, digest)
        yield from _resolution_rows(db, chunk)


def _utc(moment: datetime | None) -> datetime | None:
    """A stored moment in UTC with its zone (SQLite hands them back without one)."""
    return None if moment is None else as_utc(moment)


def _pass_rows(db: Database, session_ids: Sequence[str]) -> Iterator[tuple[str, Row]]:
    for stored in load_passes(db, session_ids=session_ids):
        head = {
            "pass_id": stored.id,
            "session_id": stored.session_id,
            "category": stored.category,
            "annotator": stored.annotator,
            "annotator_kind": stored.annotator_kind,
            "guideline_version": stored.provenance.get("guideline_version"),
            "pass_no": stored.pass_no,
            "repeat_no": stored.repeat_no,
            "status": stored.status,
            "error": stored.error,
        }
        if not stored.answers:
            yield "passes", {**head, "question_id": None, "turn": None, "value": None}
        for answer in stored.answers:
            yield (
                "passes",
                {
                    **head,
                    "question_id": answer.question_id,
                    "turn": answer.turn_index,
                    "value": answer.value,
                    "reasoning": answer.reasoning,
                },
            )


def _label_rows(chunk: SettledChunk, rule: str, digest: str) -> Iterator[tuple[str, Row]]:
    for label in chunk.record.labels:
        dialogue = label.dialogue
        for value in label.settled.values:
            yield (
                "settled_labels",
                {
                    "session_id": dialogue.session_id,
                    "application": dialogue.application,
                    "scenario": dialogue.scenario,
                    "level": dialogue.level,
                    "annotator": label.annotator,
                    "annotator_kind": label.kind,
                    "category": label.category,
                    "question_id": label.question,
                    "turn": label.turn_index,
                    "value": value,
                    "n_values": label.settled.n_values,
                    "tie": label.settled.tie,
                    "resolved": label.resolved,
                    "settling": rule,
                    "measurement": digest,
                },
            )


def _resolution_rows(db: Database, chunk: SettledChunk) -> Iterator[tuple[str, Row]]:
    sessions = [dialogue.session_id for dialogue in chunk.dialogues]
    for found in stored_resolutions(db, sessions):
        yield (
            "resolutions",
            {
                "session_id": found.session_id,
                "category": found.category,
                "question_id": found.question_id,
                "turn": found.turn_index,
                "status": found.status,
                "value": found.value,
            },
        )


class CsvTables:
    """One CSV file per table in a folder, opened together so interleaved rows stream.

    CSV quoting makes any reply safe to read back; a cell a spreadsheet would evaluate
    gets a leading ``'`` unless ``escape_formulas`` is off (see ``spreadsheet_safe``).
    """

    def __init__(
        self,
        out_dir: Path,
        tables: Mapping[str, Sequence[str]] = TABLES,
        *,
        escape_formulas: bool = True,
    ) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.out_dir = out_dir
        self._escape = escape_formulas
        self._tables = dict(tables)
        self.counts = dict.fromkeys(tables, 0)
        # Each file appears under its name only when the whole export has ended well.
        self._files = ExitStack()
        self._handles = {
            name: self._files.enter_context(
                atomic_open(out_dir / f"{name}.csv", newline="", encoding="utf-8", errors="replace")
            )
            for name in tables
        }
        self._writers = {
            name: csv.DictWriter(handle, self._tables[name], extrasaction="raise")
            for name, handle in self._handles.items()
        }
        for writer in self._writers.values():
            writer.writeheader()

    def write(self, table: str, row: Mapping[str, Any]) -> None:
        if self._escape:
            row = {key: spreadsheet_safe(value) for key, value in row.items()}
        self._writers[table].writerow(row)
        self.counts[table] += 1

    def paths(self) -> list[Path]:
        return [self.out_dir / f"{name}.csv" for name in self._tables]

    def __enter__(self) -> CsvTables:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._files.__exit__(exc_type, exc, traceback)


def write_measurement(measurement: SettledChunks, out_dir: Path) -> Path:
    """``measurement.json``: the specification the settled labels follow, with its digest."""
    document = {"digest": measurement.spec.digest, **measurement.spec.model_dump(mode="json")}
    path = out_dir / "measurement.json"
    write_atomically(path, json.dumps(document, indent=1))
    return path


def export_tables(
    db: Database,
    measurement: SettledChunks,
    out_dir: Path,
    *,
    as_csv: bool = True,
    parquet: bool = False,
    escape_formulas: bool = True,
    progress: Progress = UNWATCHED,
) -> dict[str, int]:
    """Write every table as CSV into ``out_dir`` (for spreadsheets: formulas escaped unless
    ``escape_formulas`` is off) and, when ``parquet``, as typed Parquet (never escaped);
    return the rows written per table."""
    with ExitStack() as stack:
        writers: list[CsvTables | ParquetTables] = []
        if as_csv:
            writers.append(stack.enter_context(CsvTables(out_dir, escape_formulas=escape_formulas)))
        if parquet:
            writers.append(stack.enter_context(ParquetTables(out_dir, TABLES, TABLE_TYPES)))
        for table, row in table_rows(db, measurement, progress):
            for writer in writers:
                writer.write(table, row)
    write_measurement(measurement, out_dir)
    return writers[0].counts
