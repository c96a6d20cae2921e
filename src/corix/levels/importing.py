"""Importing dialogues recorded elsewhere: a new run of imported sessions, all or nothing."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from corix.domain import EndReason, Provenance, SessionSource, TurnRecord
from corix.execution import new_run_id
from corix.levels.imported import ImportedDialogue, read_dialogues
from corix.scenarios import pack_record, resolve_pack
from corix.storage import (
    Database,
    NewRun,
    NewSession,
    RecordedSession,
    ensure_application,
    store_recorded_run,
)

__all__ = ["ImportedRun", "import_dialogues"]

NO_REPLY = "no reply was recorded"
IMPORTED_SPEC = "imported"
"""The spec of an application known only from imported dialogues: nothing to open."""


@dataclass(frozen=True, slots=True)
class ImportedRun:
    run_id: str
    dialogues: int


def import_dialogues(
    db: Database, path: Path, *, name: str | None, defaults: Mapping[str, str | None]
) -> ImportedRun:
    """Store the dialogues of ``path`` as a new run (``defaults``: application, scenario and
    level for dialogues that do not name them); a bad dialogue stores nothing."""
    dialogues = read_dialogues(path, defaults)
    application_ids = {
        app: ensure_application(db, app, IMPORTED_SPEC, new_version=True)
        for app in sorted({d.application for d in dialogues})
    }
    run = NewRun(
        new_run_id(),
        name or f"imported from {path.name}",
        {"name": name or path.stem, "kind": "imported", "source": str(path)},
        status="complete",
        finished_at=datetime.now(UTC),
        packs=tuple(pack_record(resolve_pack(s)) for s in sorted({d.scenario for d in dialogues})),
    )
    sessions = [_recorded(run.id, d, application_ids[d.application]) for d in dialogues]
    store_recorded_run(db, run, sessions)
    return ImportedRun(run.id, len(dialogues))


def _recorded(run_id: str, dialogue: ImportedDialogue, application_id: int) -> RecordedSession:
    turns = tuple(
        TurnRecord(
            index=index,
            user_text=user_text,
            response_text=reply,
            error=None if reply is not None else NO_REPLY,
        )
        for index, (user_text, reply) in enumerate(dialogue.turns)
    )
    session = NewSession(
        id=uuid.uuid4().hex,
        run_id=run_id,
        work_key=dialogue.key,
        application_id=application_id,
        scenario=dialogue.scenario,
        level=dialogue.level,
        source=SessionSource.IMPORTED,
        provenance=Provenance(
            application=dialogue.application,
            scenario=dialogue.scenario,
            engine="imported",
            conversation_id=dialogue.key,
        ),
    )
    answered = any(turn.response_text is not None for turn in turns)
    return RecordedSession(
        session, turns, EndReason.USER_ENDED if answered else EndReason.APP_ERROR
    )
