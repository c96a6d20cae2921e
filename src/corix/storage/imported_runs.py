"""Storing a run of dialogues recorded elsewhere: the run and all its sessions, or nothing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from corix.domain import SessionRecord
from corix.scenarios import PackRecord
from corix.storage._run_packs import add_run_packs
from corix.storage.clock import utcnow
from corix.storage.database import Database
from corix.storage.orm import RunRow, SessionRow, TurnRow

__all__ = ["store_imported_run"]


def store_imported_run(
    db: Database,
    *,
    run_id: str,
    name: str,
    plan: dict[str, Any],
    sessions: Sequence[SessionRecord],
    application_ids: Mapping[str, int],
    packs: Iterable[PackRecord],
) -> None:
    """One transaction: a failure leaves no run, no session and no turn behind."""
    now = utcnow()
    with db.session() as s:
        s.add(RunRow(id=run_id, name=name, plan=plan, seed=0, status="complete", finished_at=now))
        s.flush()
        add_run_packs(s, run_id, packs)
        for record in sessions:
            s.add(
                SessionRow(
                    id=record.id,
                    run_id=run_id,
                    work_key=record.provenance.conversation_id,
                    application_id=application_ids[record.application],
                    scenario=record.scenario,
                    level=record.level.value,
                    source=record.source.value,
                    status=record.status.value,
                    end_reason=record.end_reason.value if record.end_reason else None,
                    provenance=record.provenance.model_dump(mode="json"),
                    ended_at=now,
                )
            )
            for turn in record.turns:
                s.add(
                    TurnRow(
                        session_id=record.id,
                        idx=turn.index,
                        user_text=turn.user_text,
                        response_text=turn.response_text,
                        error=turn.error,
                        meta=turn.meta,
                    )
                )
