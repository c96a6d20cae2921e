"""``session_states``: every stored session of a run as it stands, running ones too."""

from __future__ import annotations

from datetime import UTC, datetime

from corix.domain import EndReason, Level, Provenance, SessionSource, SessionStatus, TurnRecord
from corix.storage import Database, create_run, ensure_application
from corix.storage.sessions import (
    NewTurn,
    SessionEnd,
    SessionState,
    add_turns,
    finish_sessions,
    session_states,
    start_sessions,
)
from corix.storage.store_records import NewSession
from support.plans import bare_plan

STARTED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _session(session_id: str, app_id: int, run_id: str) -> NewSession:
    return NewSession(
        id=session_id,
        run_id=run_id,
        work_key=f"key-{session_id}",
        application_id=app_id,
        scenario="tv_spoilers",
        level=Level.MODEL_TESTING,
        source=SessionSource.SCRIPTED,
        provenance=Provenance(application="app", scenario="tv_spoilers"),
        started_at=STARTED,
    )


def _turn(index: int, error: str | None = None) -> TurnRecord:
    return TurnRecord(
        index=index, user_text="hi", response_text=None if error else "ok", error=error
    )


def test_every_session_of_the_run_as_it_stands(any_db: Database) -> None:
    app_id = ensure_application(any_db, "app", "demo:guarded")
    for run_id in ("run-a", "run-b"):
        create_run(any_db, run_id, name=run_id, plan=bare_plan(), seed=0)
    with any_db.session() as tx:
        start_sessions(
            tx,
            [
                _session("a-done", app_id, "run-a"),
                _session("a-half", app_id, "run-a"),
                _session("a-failed", app_id, "run-a"),
                _session("b-done", app_id, "run-b"),
            ],
        )
        add_turns(
            tx,
            [
                NewTurn("a-done", _turn(0)),
                NewTurn("a-done", _turn(1)),
                NewTurn("a-half", _turn(0)),
                NewTurn("a-failed", _turn(0)),
                NewTurn("a-failed", _turn(1, error="RuntimeError: boom")),
            ],
        )
        finish_sessions(
            tx,
            [
                SessionEnd("a-done", EndReason.SCRIPT_DONE),
                SessionEnd("a-failed", EndReason.APP_ERROR, end_detail="RuntimeError: boom"),
                SessionEnd("b-done", EndReason.GAVE_UP),
            ],
        )

    def state(
        session_id: str, end: EndReason | None, detail: str | None, turns: int, errors: int
    ) -> SessionState:
        status = SessionStatus.RUNNING if end is None else SessionStatus.COMPLETE
        return SessionState(
            session_id, "run-a", f"key-{session_id}", status, end, detail, STARTED, turns, errors
        )

    assert session_states(any_db, "run-a") == [
        state("a-done", EndReason.SCRIPT_DONE, None, 2, 0),
        state("a-failed", EndReason.APP_ERROR, "RuntimeError: boom", 2, 1),
        state("a-half", None, None, 1, 0),  # a cut session is there too
    ]
    assert [s.id for s in session_states(any_db)] == ["a-done", "a-failed", "a-half", "b-done"]
    (untouched,) = session_states(any_db, "run-b")
    assert (untouched.end_reason, untouched.turns, untouched.error_turns) == (
        EndReason.GAVE_UP,
        0,
        0,
    )
    assert session_states(any_db, "no-such-run") == []
