"""Fenced leases: a holder that was paused and woke after another process took its run over
writes nothing more. Its batches are refused and rolled back in the same transaction that
checks the lease's epoch, its end is not stored, and the heartbeat tells it at once.

The real-process case (SIGSTOP, a takeover, SIGCONT) is in
``tests/execution/faults/test_run_lease.py``.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from corix.domain import Level, Provenance, RunSummary, SessionSource
from corix.storage import (
    Database,
    LeaseLost,
    RecordWriter,
    create_run,
    ensure_application,
    finish_run,
    get_run,
    holding_run,
)
from corix.storage import run_lease as lease_module
from corix.storage.clock import utcnow
from corix.storage.orm import RunRow
from corix.storage.sessions import session_states
from corix.storage.store_records import NewSession
from support.plans import bare_plan

RUN = "run-fenced"


def _session(session_id: str, app_id: int) -> NewSession:
    return NewSession(
        id=session_id,
        run_id=RUN,
        work_key=f"key-{session_id}",
        application_id=app_id,
        scenario="tv_spoilers",
        level=Level.MODEL_TESTING,
        source=SessionSource.SCRIPTED,
        provenance=Provenance(application="app", scenario="tv_spoilers"),
        started_at=datetime(2026, 1, 2, tzinfo=UTC),
    )


def _goes_silent(db: Database) -> None:
    """What 45 s of a paused holder look like to another process."""
    with db.session() as s:
        s.execute(
            update(RunRow)
            .where(RunRow.id == RUN)
            .values(lease_heartbeat_at=utcnow() - timedelta(seconds=600))
        )


async def test_a_superseded_holder_writes_nothing_and_the_new_one_writes(
    any_db: Database,
) -> None:
    app_id = ensure_application(any_db, "app", "demo:guarded")
    create_run(any_db, RUN, name="fenced", plan=bare_plan(), seed=0)
    with holding_run(any_db, RUN, "corix run") as paused:
        _goes_silent(any_db)
        with holding_run(any_db, RUN, "corix run --resume") as current:
            assert current.fence.epoch == paused.fence.epoch + 1
            lost: list[LeaseLost] = []
            with pytest.raises(LeaseLost, match=f"run '{RUN}' was taken over"):
                async with RecordWriter(
                    any_db, fence=paused.fence, on_lost=lost.append
                ) as old_writer:
                    old_writer.start_session(_session("from-the-paused", app_id))
            assert len(lost) == 1
            async with RecordWriter(any_db, fence=current.fence) as new_writer:
                new_writer.start_session(_session("from-the-current", app_id))
    stored = {state.id for state in session_states(any_db, RUN)}
    assert stored == {"from-the-current"}  # the paused holder's batch was rolled back


def test_only_the_current_holder_stores_the_end(any_db: Database) -> None:
    create_run(any_db, RUN, name="fenced", plan=bare_plan(), seed=0)
    with holding_run(any_db, RUN, "corix run") as paused:
        _goes_silent(any_db)
        with holding_run(any_db, RUN, "corix run --resume") as current:
            with pytest.raises(LeaseLost):
                finish_run(any_db, RUN, "interrupted", RunSummary(), fence=paused.fence)
            assert get_run(any_db, RUN).status == "running"
            finish_run(any_db, RUN, "complete", RunSummary(), fence=current.fence)
    assert get_run(any_db, RUN).status == "complete"
    assert get_run(any_db, RUN).lease_holder is None  # the paused holder released nothing


def test_the_heartbeat_tells_a_superseded_holder_at_once(
    any_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lease_module, "HEARTBEAT_S", 0.05)
    create_run(any_db, RUN, name="fenced", plan=bare_plan(), seed=0)
    told = threading.Event()
    with holding_run(any_db, RUN, "corix run") as paused:
        paused.when_lost(lambda lost: told.set())
        _goes_silent(any_db)
        with holding_run(any_db, RUN, "corix run --resume") as current:
            assert told.wait(5)
            assert paused.lost is not None and current.holder in str(paused.lost)
            assert current.lost is None
