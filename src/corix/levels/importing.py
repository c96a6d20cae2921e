"""Importing dialogues recorded elsewhere: a new run of imported sessions, all or nothing."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from corix.domain import (
    EndReason,
    ImportedRunPlan,
    Message,
    MessageRole,
    Provenance,
    SessionSource,
    TurnRecord,
    split_turns,
)
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
    warnings: tuple[str, ...] = ()
    """What was stored as given but may not measure as expected (a dialogue with no user
    message), one line each, naming the file and the dialogue."""


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
        ImportedRunPlan(name=name or path.stem, source=str(path)),
        status="complete",
        finished_at=datetime.now(UTC),
        packs=tuple(pack_record(resolve_pack(s)) for s in sorted({d.scenario for d in dialogues})),
    )
    sessions = [_recorded(run.id, d, application_ids[d.application]) for d in dialogues]
    store_recorded_run(db, run, sessions)
    warnings = tuple(warning for d in dialogues for warning in d.warnings)
    return ImportedRun(run.id, len(dialogues), warnings)


def _recorded(run_id: str, dialogue: ImportedDialogue, application_id: int) -> RecordedSession:
    split = split_turns(dialogue.messages)
    turns = tuple(
        _turn(index, messages, dialogue.message_usage) for index, messages in enumerate(split)
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
            system_prompt=dialogue.system_prompt,
            imported=dialogue.source,
        ),
    )
    answered = any(turn.response_text is not None for turn in turns)
    end_reason = dialogue.end_reason
    if end_reason is EndReason.USER_ENDED and not answered:
        end_reason = EndReason.APP_ERROR
    return RecordedSession(session, turns, end_reason, dialogue.end_detail)


def _turn(
    index: int, messages: tuple[Message, ...], usage: Mapping[str, tuple[int, int]]
) -> TurnRecord:
    """A turn of the messages as given, with the tokens its source counted for the
    application's messages in it; a turn the application did not answer says so."""
    counted = [
        usage[m.metadata["id"]]
        for m in messages
        if m.role is MessageRole.ASSISTANT and m.metadata.get("id") in usage
    ]
    tokens = (
        {
            "prompt_tokens": sum(c[0] for c in counted),
            "completion_tokens": sum(c[1] for c in counted),
        }
        if counted
        else {}
    )
    turn = TurnRecord.from_messages(index, messages, **tokens)
    return turn if turn.response_text is not None else turn.model_copy(update={"error": NO_REPLY})
