"""Records the database refuses are accounted for: per session, in the run, and redone.

The refusals are real: a trigger in the database refuses chosen rows, as a constraint, a
full disk or a driver limit would, while every other row of the same batch is accepted.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from corix.domain import (
    ApplicationEntry,
    EndReason,
    Level,
    LevelSettings,
    Plan,
    Provenance,
    SessionSource,
    TurnRecord,
)
from corix.execution import execute_plan
from corix.execution.run_status import RunStatus
from corix.storage import Database, RecordWriter, SessionEnd, create_run, ensure_application
from corix.storage.sessions import session_states
from corix.storage.store_records import NewSession
from support.plans import bare_plan

TESTS_DIR = Path(__file__).resolve().parents[1]
REFUSAL = "refused by the test trigger"


@pytest.fixture(autouse=True)
def _support_apps_importable() -> Iterator[None]:
    sys.path.insert(0, str(TESTS_DIR))
    yield
    sys.path.remove(str(TESTS_DIR))


def _refuse(db: Database, table: str, condition: str) -> None:
    """Make the database refuse inserts into ``table`` of rows matching ``condition``."""
    with db.engine.begin() as connection:
        if db.dialect == "sqlite":
            connection.execute(
                text(
                    f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} "
                    f"WHEN {condition} "
                    f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END"
                )
            )
        else:
            connection.execute(
                text(
                    f"CREATE OR REPLACE FUNCTION refuse_{table}() RETURNS trigger AS $$ "
                    f"BEGIN RAISE EXCEPTION '{REFUSAL}'; END $$ LANGUAGE plpgsql"
                )
            )
            connection.execute(
                text(
                    f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} FOR EACH ROW "
                    f"WHEN ({condition}) EXECUTE FUNCTION refuse_{table}()"
                )
            )


def _allow(db: Database, table: str) -> None:
    with db.engine.begin() as connection:
        on = "" if db.dialect == "sqlite" else f" ON {table}"
        connection.execute(text(f"DROP TRIGGER refuse_{table}{on}"))


def _plan(repeats: int = 1) -> Plan:
    return Plan(
        name="refusals",
        seed=2,
        applications=[ApplicationEntry(name="echo", spec="python:support.apps:EchoApp")],
        scenarios=["tv_spoilers"],
        levels={Level.MODEL_TESTING: LevelSettings(repeats=repeats)},
        concurrency=8,
    )


def _ends(db: Database, run_id: str) -> dict[str, tuple[str | None, str | None]]:
    states = session_states(db, run_id)
    return {state.work_key or "": (state.end_reason, state.end_detail) for state in states}


def _session(session_id: str, app_id: int) -> NewSession:
    return NewSession(
        id=session_id,
        run_id="run-1",
        work_key=session_id,
        application_id=app_id,
        scenario="tv_spoilers",
        level=Level.MODEL_TESTING,
        source=SessionSource.SCRIPTED,
        provenance=Provenance(application="app", scenario="tv_spoilers"),
    )


def _turn(reply: str) -> TurnRecord:
    return TurnRecord(index=0, user_text="hi", response_text=reply)


async def test_a_session_that_lost_a_record_ends_as_a_storage_failure(any_db: Database) -> None:
    app_id = ensure_application(any_db, "app", "demo:guarded")
    create_run(any_db, "run-1", name="t", plan=bare_plan(), seed=1)
    _refuse(any_db, "turns", "NEW.response_text LIKE '%poison%'")
    async with RecordWriter(any_db, max_batch=1000, max_delay_s=0.2) as writer:
        for name in ("same_batch", "later_batch", "fine"):
            writer.start_session(_session(name, app_id))
        writer.add_turn("same_batch", _turn("poison"))
        writer.add_turn("later_batch", _turn("poison"))
        writer.add_turn("fine", _turn("ok"))
        writer.finish_session(SessionEnd("same_batch", end_reason=EndReason.SCRIPT_DONE))
        await asyncio.sleep(0.5)  # the batch above is committed (and refused) meanwhile
        writer.finish_session(SessionEnd("later_batch", end_reason=EndReason.SCRIPT_DONE))
        writer.finish_session(SessionEnd("fine", end_reason=EndReason.SCRIPT_DONE))
    states = session_states(any_db)
    ends = {state.id: state.end_reason for state in states}
    details = {state.id: state.end_detail for state in states}
    assert ends == {
        "same_batch": "storage_error",
        "later_batch": "storage_error",
        "fine": "script_done",
    }
    for name in ("same_batch", "later_batch"):
        detail = details[name]
        assert detail is not None and detail.startswith(f"the database refused turn 0 of {name}: ")
        assert REFUSAL in detail
    assert details["fine"] is None


async def test_refused_turns_fail_their_sessions_and_the_run_says_so(any_db: Database) -> None:
    _refuse(any_db, "turns", "NEW.user_text LIKE '%episode%'")
    result = await execute_plan(_plan(), any_db)
    ends = _ends(any_db, result.run_id)
    failed = {key for key, (reason, _) in ends.items() if reason == "storage_error"}
    assert failed and len(failed) < len(ends)
    assert all(REFUSAL in (ends[key][1] or "") for key in failed)
    assert result.status is RunStatus.COMPLETE_WITH_FAILURES
    assert result.stats.failed_sessions == len(failed)
    assert len(result.stats.refused_records) >= len(failed)
    assert all(REFUSAL in refusal for refusal in result.stats.refused_records)


async def test_refused_sessions_are_missing_work_that_resume_redoes(any_db: Database) -> None:
    _refuse(any_db, "sessions", "NEW.work_key LIKE '%/1'")  # every item's second repeat
    refused = await execute_plan(_plan(repeats=2), any_db)
    assert refused.status is RunStatus.COMPLETE_WITH_FAILURES
    stored = len(_ends(any_db, refused.run_id))
    assert refused.stats.missing_sessions == stored > 0
    _allow(any_db, "sessions")
    resumed = await execute_plan(_plan(), any_db, resume_run=refused.run_id)
    assert resumed.status is RunStatus.COMPLETE
    ends = _ends(any_db, refused.run_id)
    assert len(ends) == 2 * stored == resumed.stats.sessions
    assert {key[-2:] for key in ends} == {"/0", "/1"}
    assert resumed.stats.missing_sessions == 0
