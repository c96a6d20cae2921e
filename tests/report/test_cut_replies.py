"""Replies cut at the model's token limit are counted per session and per run."""

from __future__ import annotations

import pytest

from corix.assessment import builtin_harm_packs
from corix.assessment.risk_orders import RiskOrders
from corix.assessment.schema import load_builtin_schema
from corix.domain import SessionSource
from corix.report.sessions import NoteSettling, collect_sessions
from corix.storage import Database, create_run, ensure_application
from corix.storage.orm import SessionRow, TurnRow


def _store(db: Database) -> None:
    create_run(db, "run-cut", name="cut", plan={}, seed=0)
    app_id = ensure_application(db, "assistant", "demo:any")
    with db.session() as s:
        s.add(
            SessionRow(
                id="s1",
                run_id="run-cut",
                work_key="s1",
                application_id=app_id,
                scenario="tv_spoilers",
                level="red_teaming",
                source=SessionSource.SCRIPTED.value,
                status="complete",
                provenance={"application": "assistant", "scenario": "tv_spoilers"},
            )
        )
        s.flush()
        finish_reasons = ["length", "stop", None, "length"]
        for i, reason in enumerate(finish_reasons):
            meta = {} if reason is None else {"finish_reason": reason}
            s.add(TurnRow(session_id="s1", idx=i, user_text="q", response_text="a", meta=meta))


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
