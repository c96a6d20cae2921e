"""Replies cut at the model's token limit are counted per session and per run."""

from __future__ import annotations

import pytest

from corix.assessment import builtin_harm_packs
from corix.assessment.risk_orders import RiskOrders
from corix.assessment.schema import load_builtin_schema
from corix.domain import Level, Provenance, SessionSource, TurnRecord
from corix.report.sessions import NoteSettling, collect_sessions
from corix.storage import (
    Database,
    NewRun,
    NewSession,
    RecordedSession,
    ensure_application,
    store_recorded_run,
)
from support.plans import bare_plan


def _store(db: Database) -> None:
    app_id = ensure_application(db, "assistant", "demo:any")
    session = NewSession(
        id="s1",
        run_id="run-cut",
        work_key="s1",
        application_id=app_id,
        scenario="tv_spoilers",
        level=Level.RED_TEAMING,
        source=SessionSource.SCRIPTED,
        provenance=Provenance(application="assistant", scenario="tv_spoilers"),
    )
    finish_reasons = ["length", "stop", None, "length"]
    turns = tuple(
        TurnRecord(
            index=i,
            user_text="q",
            response_text="a",
            meta={} if reason is None else {"finish_reason": reason},
        )
        for i, reason in enumerate(finish_reasons)
    )
    store_recorded_run(
        db,
        NewRun("run-cut", "cut", bare_plan()),
        [RecordedSession(session, turns, end_reason=None)],
    )


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_cut_replies_are_counted(backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "sqlite":
        db = request.getfixturevalue("sqlite_db")
    else:
        db = Database(request.getfixturevalue("postgres_url"))
    try:
        _store(db)
        settling = NoteSettling("majority", RiskOrders(load_builtin_schema(), builtin_harm_packs()))
        catalog = collect_sessions(db, ["run-cut"], per_group=1, settling=settling)
    finally:
        if backend == "postgres":
            db.dispose()
    (entry,) = catalog.entries
    assert (entry.n_turns, entry.n_cut_turns) == (4, 2)
    assert catalog.cut_turns == 2
