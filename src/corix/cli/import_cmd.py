"""`corix import`: dialogues recorded elsewhere become a run corix can annotate and report."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from corix.cli.common import DbOption, console, database

if TYPE_CHECKING:
    from corix.domain import SessionRecord
    from corix.levels import ImportedDialogue


NO_REPLY = "no reply was recorded"
IMPORTED_SPEC = "imported"
"""The spec of an application known only from imported dialogues: nothing to open."""


def import_command(
    path: Annotated[Path, typer.Argument(help="Dialogues: .jsonl (OpenAI messages) or .csv.")],
    name: Annotated[str | None, typer.Option(help="Name of the new run.")] = None,
    application: Annotated[
        str | None, typer.Option(help="Application, if not in the file.")
    ] = None,
    scenario: Annotated[str | None, typer.Option(help="Scenario pack, if not in the file.")] = None,
    level: Annotated[str | None, typer.Option(help="Level, if not in the file.")] = None,
    db: DbOption = None,
) -> None:
    """Import dialogues recorded elsewhere as a new run: all of them, or nothing.

    Then 'corix annotate RUN', 'corix defects RUN' and 'corix report RUN' as for any run.
    """
    from corix.execution import new_run_id
    from corix.levels import read_dialogues
    from corix.scenarios import pack_record, resolve_pack
    from corix.storage import Repository, store_imported_run

    defaults = {"application": application, "scenario": scenario, "level": level}
    dialogues = read_dialogues(path, defaults)
    run_id = new_run_id()
    with database(db, create=True) as database_:
        repo = Repository(database_)
        ids = {
            app: repo.ensure_application(app, IMPORTED_SPEC, new_version=True)
            for app in sorted({d.application for d in dialogues})
        }
        store_imported_run(
            database_,
            run_id=run_id,
            name=name or f"imported from {path.name}",
            plan={"name": name or path.stem, "kind": "imported", "source": str(path)},
            sessions=[_session(dialogue) for dialogue in dialogues],
            application_ids=ids,
            packs=[pack_record(resolve_pack(s)) for s in sorted({d.scenario for d in dialogues})],
        )
    console.print(f"imported {len(dialogues)} dialogues as run {run_id}", soft_wrap=True)


def _session(dialogue: ImportedDialogue) -> SessionRecord:
    from corix.domain import EndReason, Provenance, SessionRecord, SessionSource, TurnRecord

    turns = [
        TurnRecord(
            index=index,
            user_text=user_text,
            response_text=reply,
            error=None if reply is not None else NO_REPLY,
        )
        for index, (user_text, reply) in enumerate(dialogue.turns)
    ]
    answered = any(turn.response_text is not None for turn in turns)
    return SessionRecord(
        id=uuid.uuid4().hex,
        application=dialogue.application,
        scenario=dialogue.scenario,
        level=dialogue.level,
        source=SessionSource.IMPORTED,
        end_reason=EndReason.USER_ENDED if answered else EndReason.APP_ERROR,
        provenance=Provenance(
            application=dialogue.application,
            scenario=dialogue.scenario,
            engine="imported",
            conversation_id=dialogue.key,
        ),
        turns=turns,
    )
