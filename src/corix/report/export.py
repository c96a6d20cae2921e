"""Export of a run as JSON Lines: one session per line, with turns and provenance.

Each line also carries the dialogue as OpenAI chat ``messages`` (with its ``id``,
``application``, ``scenario`` and ``level``), so ``corix import`` reads the file back as
imported dialogues. The whole run, annotations included, travels as a run file
(:mod:`corix.report.run_file`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from itertools import groupby, islice
from operator import attrgetter

from corix.domain import SessionRecord
from corix.report.progress import UNWATCHED, Progress
from corix.report.run_file import openai_messages
from corix.storage import (
    Database,
    as_utc,
    count_complete_sessions,
    iter_sessions,
    questionnaire_answers,
)

_BATCH = 500  # sessions read, and their answers, a batch at a time


def export_jsonl(db: Database, *run_ids: str, progress: Progress = UNWATCHED) -> Iterator[str]:
    """Stream the runs' complete sessions, a line each, counted by ``progress``; memory
    stays flat however large the runs are."""
    progress.planned(count_complete_sessions(db, run_ids))
    for run_id in run_ids:
        sessions = iter_sessions(db, run_id, batch_size=_BATCH)
        while batch := list(islice(sessions, _BATCH)):
            answers = {
                session_id: [answer.as_answer() for answer in found]
                for session_id, found in groupby(
                    questionnaire_answers(db, [record.id for record in batch]),
                    key=attrgetter("session_id"),
                )
            }
            for record in batch:
                document = _in_utc(record).model_dump(mode="json")
                document["messages"] = openai_messages(record.turns)
                document["questionnaire"] = [a.model_dump() for a in answers.get(record.id, [])]
                yield json.dumps(document, ensure_ascii=False, sort_keys=True)
                progress.advance()


def _in_utc(record: SessionRecord) -> SessionRecord:
    """The record with every moment in UTC and its zone (SQLite hands them back without)."""
    return record.model_copy(
        update={
            "started_at": _utc(record.started_at),
            "ended_at": _utc(record.ended_at),
            "turns": [
                turn.model_copy(update={"created_at": _utc(turn.created_at)})
                for turn in record.turns
            ],
        }
    )


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else as_utc(moment)
