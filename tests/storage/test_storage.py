"""The record writer and the stores on SQLite and on the real PostgreSQL server."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event, select, text
from sqlalchemy.exc import IntegrityError

from corix.domain import (
    EndReason,
    Level,
    ModelUsage,
    Provenance,
    RunUsage,
    SessionSource,
    TurnRecord,
)
from corix.errors import CorixError
from corix.storage import (
    Database,
    RecordWriter,
    SessionEnd,
    application_conflict,
    as_utc,
    completed_work_keys,
    count_completed_work,
    create_run,
    discard_incomplete_sessions,
    ensure_application,
    finish_run,
    get_run,
    iter_sessions,
    load_session,
    questionnaire_answers,
    run_totals,
)
from corix.storage.applications import list_applications
from corix.storage.database import IN_CHUNK, SchemaUpgradeError, alembic_config
from corix.storage.migrations import HEAD_REVISION
from corix.storage.orm import ApplicationRow, Base, EvaluationRow, ResolutionRow, RunRow
from corix.storage.store_records import NewQuestionnaireAnswer, NewSession, RunTotals
from support.plans import bare_plan


def _session(session_id: str, app_id: int, run_id: str, key: str) -> NewSession:
    return NewSession(
        id=session_id,
        run_id=run_id,
        work_key=key,
        application_id=app_id,
        scenario="tv_spoilers",
        level=Level.MODEL_TESTING,
        source=SessionSource.SCRIPTED,
        provenance=Provenance(application="app", scenario="tv_spoilers", seed=3),
    )


@pytest.mark.filterwarnings("ignore:.*expression-based index")
def test_migrations_match_the_models(any_db: Database) -> None:
    with any_db.engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diff == []


def test_the_head_revision_is_the_newest_migration_script(any_db: Database) -> None:
    """A new migration must move ``HEAD_REVISION``: else no database would upgrade to it."""
    scripts = ScriptDirectory.from_config(alembic_config(any_db.engine))
    assert scripts.get_heads() == [HEAD_REVISION]


def test_a_current_schema_opens_without_importing_alembic(
    any_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "alembic", None)  # any import of it now fails
    Database(any_db.url).dispose()
    with any_db.engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = 'series_claims'"))
    with pytest.raises(ImportError):
        Database(any_db.url)


def test_a_newer_corixs_schema_is_refused_with_its_revision(any_db: Database) -> None:
    with any_db.engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = 'from_later'"))
    with pytest.raises(SchemaUpgradeError, match="from_later"):
        Database(any_db.url)


async def test_writer_persists_sessions_turns_and_answers(any_db: Database) -> None:
    app_id = ensure_application(any_db, "app", "demo:guarded", version="1")
    create_run(any_db, "run-1", name="t", plan=bare_plan(), seed=3)
    async with RecordWriter(any_db, max_batch=3) as writer:
        for n in range(5):
            writer.start_session(_session(f"s{n}", app_id, "run-1", f"k{n}"))
            for idx in range(2):
                writer.add_turn(
                    f"s{n}",
                    TurnRecord(
                        index=idx,
                        user_text=f"u{idx}",
                        response_text=None if (n, idx) == (4, 1) else f"r{idx}",
                        error="boom" if (n, idx) == (4, 1) else None,
                        latency_ms=1.5,
                    ),
                )
            writer.add_questionnaire_answer(
                NewQuestionnaireAnswer(
                    session_id=f"s{n}",
                    item_id="q_helpful",
                    respondent="sim",
                    simulated=True,
                    value=4.0,
                )
            )
            if n != 2:
                writer.finish_session(SessionEnd(f"s{n}", end_reason=EndReason.SCRIPT_DONE))
    assert writer.committed_turns == 10
    assert _counts(run_totals(any_db, "run-1")) == (5, 10, 1)
    assert completed_work_keys(any_db, "run-1") == {"k0", "k1", "k3", "k4"}
    assert count_completed_work(any_db, "run-1") == 4
    record = load_session(any_db, "s4")
    assert [t.index for t in record.turns] == [0, 1]
    assert record.turns[1].error == "boom" and record.turns[1].failed
    assert record.end_reason is EndReason.SCRIPT_DONE
    assert record.provenance.seed == 3
    assert questionnaire_answers(any_db, ["s0"])[0].value == 4.0
    # Only complete sessions are streamed, in a stable order.
    assert [s.id for s in iter_sessions(any_db, "run-1", batch_size=2)] == ["s0", "s1", "s3", "s4"]


async def test_a_session_ended_in_the_batch_it_started_in_is_stored_as_one_ended_later(
    any_db: Database,
) -> None:
    """A session that starts and ends in one batch is inserted complete, with no UPDATE:
    its row must read back as that of a session whose end came in a later batch."""
    app_id = ensure_application(any_db, "app", "demo:guarded", version="1")
    create_run(any_db, "run-1", name="t", plan=bare_plan(), seed=3)
    ended_at = datetime(2026, 11, 29, 12, 0, 5, tzinfo=UTC)
    simulator = ModelUsage(calls=2, prompt_tokens=30, completion_tokens=4)

    def end(session_id: str) -> SessionEnd:
        return SessionEnd(
            session_id,
            end_reason=EndReason.APP_ERROR,
            end_detail="boom",
            first_success_turn=1,
            ended_at=ended_at,
            simulator=simulator,
        )

    turn = TurnRecord(index=0, user_text="u", error="boom", latency_ms=2.0)
    statements: list[str] = []
    event.listen(any_db.engine, "before_cursor_execute", _record_statement(statements))
    async with RecordWriter(any_db) as writer:  # one batch, committed as the writer closes
        writer.start_session(_session("at-once", app_id, "run-1", "k1"))
        writer.add_turn("at-once", turn)
        writer.finish_session(end("at-once"))
        writer.start_session(_session("running", app_id, "run-1", "k2"))
        writer.add_turn("running", turn)
    assert not [sql for sql in statements if sql.lstrip().upper().startswith("UPDATE")]
    async with RecordWriter(any_db) as writer:
        writer.finish_session(end("running"))  # a later batch: the UPDATE
    at_once, later = load_session(any_db, "at-once"), load_session(any_db, "running")
    assert at_once.end_reason is EndReason.APP_ERROR and at_once.ended_at is not None
    assert as_utc(at_once.ended_at) == ended_at
    different = {"id", "turns", "started_at"}
    assert at_once.model_dump(exclude=different) == later.model_dump(exclude=different)
    with any_db.engine.connect() as connection:
        usage = connection.execute(
            text(
                "SELECT id, simulator_calls, simulator_prompt_tokens, "
                "simulator_completion_tokens FROM sessions ORDER BY id"
            )
        ).all()
    assert [tuple(row) for row in usage] == [("at-once", 2, 30, 4), ("running", 2, 30, 4)]
    assert [t.error for t in at_once.turns] == [t.error for t in later.turns] == ["boom"]
    assert count_completed_work(any_db, "run-1") == 2


def _record_statement(statements: list[str]) -> Callable[..., None]:
    def record(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        statements.append(statement)

    return record


async def test_questionnaire_answers_read_back_as_written(any_db: Database) -> None:
    app_id = ensure_application(any_db, "app", "demo:guarded", version="1")
    create_run(any_db, "run-1", name="t", plan=bare_plan(), seed=3)
    simulated = NewQuestionnaireAnswer(
        session_id="s0",
        item_id="q_helpful",
        respondent="simulated:llm",
        simulated=True,
        value=4.0,
        provenance={"answered_by": "in_character", "model": "sim-model"},
    )
    person = NewQuestionnaireAnswer(
        session_id="s0", item_id="q_comment", respondent="user:7", simulated=False, text="a\x00b"
    )
    async with RecordWriter(any_db) as writer:
        for session_id in ("s0", "s1"):
            writer.start_session(_session(session_id, app_id, "run-1", session_id))
            writer.finish_session(SessionEnd(session_id, end_reason=EndReason.SCRIPT_DONE))
        writer.add_questionnaire_answer(simulated)
        writer.add_questionnaire_answer(person)
    stored = questionnaire_answers(any_db, ["s0", "s1", "missing"])
    # Who answered, how and when, in the order written; text crossed the storable boundary.
    assert [replace(answer, created_at=simulated.created_at) for answer in stored] == [
        simulated,
        replace(
            person,
            text="a\ufffdb",
            provenance={"replaced_unstorable": ["value_text"]},
            created_at=simulated.created_at,
        ),
    ]
    assert [as_utc(answer.created_at) for answer in stored] == [
        simulated.created_at,
        person.created_at,
    ]
    assert questionnaire_answers(any_db, ["s1"]) == []


async def test_questionnaire_answers_are_read_a_chunk_at_a_time(sqlite_db: Database) -> None:
    app_id = ensure_application(sqlite_db, "app", "demo:guarded")
    create_run(sqlite_db, "run-1", name="t", plan=bare_plan(), seed=0)
    ids = [f"s{n:04d}" for n in range(IN_CHUNK + 2)]  # two IN lists' worth
    async with RecordWriter(sqlite_db) as writer:
        for session_id in ids:
            writer.start_session(_session(session_id, app_id, "run-1", session_id))
        for session_id in (ids[-1], ids[0]):
            writer.add_questionnaire_answer(
                NewQuestionnaireAnswer(session_id, "q_trust", "user:1", simulated=False, value=3)
            )
    # Asked in any order, with ids that match nothing: both chunks read, by session.
    found = questionnaire_answers(sqlite_db, [*reversed(ids), "missing"])
    assert [answer.session_id for answer in found] == [ids[0], ids[-1]]


async def test_a_full_backlog_makes_producers_wait_for_the_commit(sqlite_db: Database) -> None:
    app_id = ensure_application(sqlite_db, "app", "demo:guarded")
    create_run(sqlite_db, "run-3", name="t", plan=bare_plan(), seed=0)
    # A long delay and a large batch: only the backlog bound can start this commit.
    async with RecordWriter(sqlite_db, max_batch=1000, max_delay_s=60.0, max_backlog=4) as writer:
        for n in range(3):
            writer.start_session(_session(f"s{n}", app_id, "run-3", f"k{n}"))
        await asyncio.wait_for(writer.room(), 1)  # under the bound: no wait
        assert run_totals(sqlite_db, "run-3").sessions == 0
        writer.start_session(_session("s3", app_id, "run-3", "k3"))
        await asyncio.wait_for(writer.room(), 10)
        assert run_totals(sqlite_db, "run-3").sessions == 4  # committed before room was given


async def test_discarding_incomplete_sessions_removes_them_whole(any_db: Database) -> None:
    app_id = ensure_application(any_db, "app", "demo:guarded")
    create_run(any_db, "run-2", name="t", plan=bare_plan(), seed=0)
    async with RecordWriter(any_db) as writer:
        writer.start_session(_session("done", app_id, "run-2", "a"))
        writer.finish_session(SessionEnd("done", end_reason=EndReason.SCRIPT_DONE))
        writer.start_session(_session("half", app_id, "run-2", "b"))
        writer.add_turn("half", TurnRecord(index=0, user_text="u"))
    assert discard_incomplete_sessions(any_db, "run-2") == 1
    assert _counts(run_totals(any_db, "run-2")) == (1, 0, 0)


def test_ensure_application_is_idempotent(any_db: Database) -> None:
    first = ensure_application(any_db, "app", "demo:guarded", version="1")
    second = ensure_application(any_db, "app", "demo:guarded", version="2")
    assert first == second
    assert [a.version for a in list_applications(any_db)] == ["2"]


def test_unknown_run_lists_known(sqlite_db: Database) -> None:
    create_run(sqlite_db, "run-x", name="t", plan=bare_plan(), seed=0)
    with pytest.raises(Exception, match="Known runs: run-x"):
        get_run(sqlite_db, "run-y")


def test_a_changed_spec_is_refused_unless_a_new_version_is_asked_for(any_db: Database) -> None:
    first = ensure_application(any_db, "acme", "openai:http://a/v1?model=m1")
    assert ensure_application(any_db, "acme", "openai:http://a/v1?model=m1") == first
    with pytest.raises(CorixError, match=r"'acme' is stored with another spec.*new_version"):
        ensure_application(any_db, "acme", "openai:http://a/v1?model=m2")
    second = ensure_application(any_db, "acme", "openai:http://a/v1?model=m2", new_version=True)
    third = ensure_application(any_db, "acme", "openai:http://a/v1?model=m3", new_version=True)
    names = {row.id: (row.name, row.spec) for row in list_applications(any_db)}
    # The stored application is never rewritten: its sessions keep what they talked to.
    assert names[first] == ("acme", "openai:http://a/v1?model=m1")
    assert names[second] == ("acme v2", "openai:http://a/v1?model=m2")
    assert names[third][0] == "acme v3"
    # Every version runs by its name; a new version of a spec stored already reuses it.
    assert ensure_application(any_db, "acme v2", "openai:http://a/v1?model=m2") == second
    assert ensure_application(any_db, "acme v3", "openai:http://a/v1?model=m3") == third
    assert ensure_application(any_db, "acme", "openai:http://a/v1?model=m2", new_version=True) == (
        second
    )
    with pytest.raises(CorixError, match="its version with this spec is 'acme v2'"):
        ensure_application(any_db, "acme", "openai:http://a/v1?model=m2")
    with pytest.raises(CorixError, match="'acme v2' is stored with another spec"):
        ensure_application(any_db, "acme v2", "openai:http://a/v1?model=m3")
    assert (
        application_conflict(any_db, "acme v3", "openai:http://a/v1?model=m3", new_version=False)
        is None
    )


def test_a_web_evaluations_application_is_never_rewritten_by_a_run(any_db: Database) -> None:
    with any_db.session() as s:
        s.add(EvaluationRow(id="e1", name="Pilot series"))
        s.flush()
        s.add(ApplicationRow(name="acme", spec="demo:guarded", evaluation_id="e1"))
    with pytest.raises(CorixError, match="'acme' belongs to the web evaluation 'Pilot series'"):
        ensure_application(any_db, "acme", "demo:unguarded")
    with any_db.session() as s:
        assert s.scalars(select(ApplicationRow.spec)).all() == ["demo:guarded"]


@pytest.mark.parametrize("turn", [None, 2])
async def test_one_resolution_per_disputed_answer(any_db: Database, turn: int | None) -> None:
    # The unique index is an expression (a dialogue-level answer has no turn), which the
    # migration check cannot compare, so it is checked by what it refuses.
    app_id = ensure_application(any_db, "app", "demo:guarded")
    create_run(any_db, "run-1", name="t", plan=bare_plan(), seed=3)
    async with RecordWriter(any_db) as writer:
        writer.start_session(_session("s1", app_id, "run-1", "k1"))
    resolution = {
        "session_id": "s1",
        "category": "risk_assessment",
        "question_id": "ra_prohibited_released",
        "turn_index": turn,
        "status": "resolved",
        "value_text": "no",
    }
    with any_db.session() as s:
        s.add(ResolutionRow(**resolution))
    with pytest.raises(IntegrityError), any_db.session() as s:
        s.add(ResolutionRow(**resolution))


def test_a_summary_stored_before_schema_1_reads_upgraded_and_is_stored_versioned(
    sqlite_db: Database,
) -> None:
    create_run(sqlite_db, "old", name="t", plan=bare_plan(), seed=0)
    old = {"sessions": 2, "turns": 6, "model_calls": 7, "cost": 0.5, "wall_s": 3.0}
    with sqlite_db.session() as s:
        row = s.get(RunRow, "old")
        assert row is not None
        row.summary = old  # as an older corix stored it: no version, usage keys flat
    summary = get_run(sqlite_db, "old").summary
    assert summary.schema_version == 1 and (summary.sessions, summary.turns) == (2, 6)
    assert summary.usage == RunUsage(model_calls=7, cost=0.5) and summary.wall_s == 3.0
    finish_run(sqlite_db, "old", "complete", summary)
    with sqlite_db.session() as s:
        stored = s.get(RunRow, "old")
        assert stored is not None
        assert stored.summary["schema_version"] == 1
        assert stored.summary["usage"]["model_calls"] == 7
    assert get_run(sqlite_db, "old").summary == summary


def _counts(totals: RunTotals) -> tuple[int, int, int]:
    return totals.sessions, totals.turns, totals.error_turns
