"""Untrusted text is made storable at one boundary, and one bad row never takes its batch."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import JSON, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import make_url

from corix.domain import EndReason, ImportedRunPlan, Level, Provenance, SessionSource, TurnRecord
from corix.storage import (
    Database,
    NewRun,
    NotFoundError,
    RecordedSession,
    RecordWriter,
    SessionEnd,
    create_run,
    ensure_application,
    get_run,
    store_recorded_run,
)
from corix.storage.applications import list_applications
from corix.storage.orm import SessionRow, TurnRow
from corix.storage.store_records import NewSession
from corix.storage.text import (
    REPLACEMENT,
    UntrustedJSON,
    storable_json,
    storable_parameters,
    storable_text,
)
from support.plans import bare_plan

HOSTILE = "spoiler\x00 here \ud800 and \udfff end"


def _session(session_id: str, app_id: int, key: str) -> NewSession:
    return NewSession(
        id=session_id,
        run_id="run-1",
        work_key=key,
        application_id=app_id,
        scenario="tv_spoilers",
        level=Level.MODEL_TESTING,
        source=SessionSource.SCRIPTED,
        provenance=Provenance(
            application="app",
            scenario="tv_spoilers",
            parameters={"persona": "a \x00 b \ud800", "temperature": float("nan")},
        ),
    )


def _turn(idx: int, reply: str) -> TurnRecord:
    return TurnRecord(index=idx, user_text="Who dies?", response_text=reply, latency_ms=1.0)


async def test_nul_and_lone_surrogates_are_replaced_and_recorded(any_db: Database) -> None:
    app_id = ensure_application(any_db, "app", "demo:guarded")
    create_run(any_db, "run-1", name="t", plan=bare_plan(), seed=1)
    async with RecordWriter(any_db) as writer:
        writer.start_session(_session("s1", app_id, "k1"))
        writer.add_turn("s1", _turn(0, HOSTILE))
        writer.finish_session(SessionEnd("s1", end_reason=EndReason.SCRIPT_DONE))
    assert writer.rejected == []
    with any_db.session() as s:
        turn = s.scalars(select(TurnRow)).one()
        session = s.scalars(select(SessionRow)).one()
        assert turn.response_text == storable_text(HOSTILE)
        assert turn.response_text.count(REPLACEMENT) == 3
        assert turn.meta["replaced_unstorable"] == ["response_text"]
        assert session.provenance["parameters"]["persona"] == f"a {REPLACEMENT} b {REPLACEMENT}"
        # typed provenance serialises NaN as JSON null, which both backends store
        assert session.provenance["parameters"]["temperature"] is None
        assert session.status == "complete"


async def test_a_refused_row_does_not_take_its_batch(any_db: Database) -> None:
    app_id = ensure_application(any_db, "app", "demo:guarded")
    create_run(any_db, "run-1", name="t", plan=bare_plan(), seed=1)
    async with RecordWriter(any_db, max_batch=1000, max_delay_s=1.0) as writer:
        for n in range(3):
            writer.start_session(_session(f"s{n}", app_id, f"k{n}"))
            writer.add_turn(f"s{n}", _turn(0, "fine"))
        writer.add_turn("s1", _turn(0, "a second turn 0: refused by the unique index"))
        writer.add_turn("missing", _turn(0, "a turn of no session: refused too"))
    assert [r.record for r in writer.rejected] == ["turn 0 of s1", "turn 0 of missing"]
    with any_db.session() as s:
        stored = s.execute(select(TurnRow.session_id, TurnRow.response_text)).all()
    assert sorted(stored) == [("s0", "fine"), ("s1", "fine"), ("s2", "fine")]


@given(st.text())
def test_storable_text_is_utf8_without_nul_and_keeps_clean_text(text: str) -> None:
    stored = storable_text(text)
    stored.encode("utf-8")  # never raises: no lone surrogate is left
    assert "\x00" not in stored and len(stored) == len(text)
    assert storable_text(stored) == stored
    if all(c != "\x00" and not "\ud800" <= c <= "\udfff" for c in text):
        assert stored == text


@given(
    st.recursive(
        st.text() | st.integers() | st.floats() | st.none(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=20,
    )
)
def test_storable_json_cleans_every_string(value: object) -> None:
    json.dumps(storable_json(value), ensure_ascii=False, allow_nan=False).encode("utf-8")


_DIALECTS = (sqlite.dialect(), make_url("postgresql+psycopg://").get_dialect()())


@given(
    st.recursive(
        st.text()
        | st.sampled_from(["\x00", "\ud800", "\\u0000", "NaN", "\U0001f600"])
        | st.integers()
        | st.floats()
        | st.none(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=20,
    )
)
def test_a_json_column_stores_what_the_walk_makes_storable(value: object) -> None:
    # The column serialises first and walks only suspect JSON: the text must be the same.
    for dialect in _DIALECTS:
        column = UntrustedJSON().dialect_impl(dialect).bind_processor(dialect)
        plain = JSON().dialect_impl(dialect).bind_processor(dialect)
        assert column is not None and plain is not None
        assert _sent(column(value)) == _sent(plain(storable_json(value)))


def _sent(bound: Any) -> str:
    """What the driver receives as text (psycopg takes a wrapper it serialises itself)."""
    return bound if isinstance(bound, str) else json.dumps(bound.obj)


def test_an_applications_own_version_is_made_storable_and_bounded(any_db: Database) -> None:
    app_id = ensure_application(any_db, "app", "demo:guarded", version="v\x00\ud800" + "9" * 300)
    (stored,) = [row.version for row in list_applications(any_db) if row.id == app_id]
    assert stored == f"v{REPLACEMENT}{REPLACEMENT}" + "9" * 197


def test_every_statement_parameter_is_made_storable(any_db: Database) -> None:
    with pytest.raises(NotFoundError, match="no run"):
        get_run(any_db, "run-\x00\ud800")  # a lookup, not a driver error
    app_id = ensure_application(any_db, "na\x00me", "demo:guarded")
    assert [a.name for a in list_applications(any_db) if a.id == app_id] == [f"na{REPLACEMENT}me"]


@given(st.lists(st.text() | st.integers() | st.none()), st.booleans())
def test_storable_parameters_cleans_every_string_and_keeps_the_shape(
    values: list[object], as_mapping: bool
) -> None:
    parameters = {f"p{n}": v for n, v in enumerate(values)} if as_mapping else tuple(values)
    cleaned = storable_parameters(parameters)
    items = list(cleaned.values()) if isinstance(cleaned, dict) else list(cleaned)
    assert type(cleaned) is type(parameters) and len(items) == len(values)
    for before, after in zip(values, items, strict=True):
        assert after == (storable_text(before) if isinstance(before, str) else before)


async def test_an_imported_turn_is_stored_like_a_run_turn(any_db: Database) -> None:
    """Both write paths go through one: the replacement note, latency and tokens alike."""
    app_id = ensure_application(any_db, "app", "demo:guarded")
    turn = TurnRecord(
        index=0,
        user_text="Who dies?\x00",
        response_text=HOSTILE,
        latency_ms=12.5,
        prompt_tokens=7,
        completion_tokens=11,
        meta={"finish_reason": "stop"},
    )
    create_run(any_db, "run-1", name="t", plan=bare_plan(), seed=1)
    async with RecordWriter(any_db) as writer:
        writer.start_session(_session("s1", app_id, "k1"))
        writer.add_turn("s1", turn)
        writer.finish_session(SessionEnd("s1", end_reason=EndReason.SCRIPT_DONE))
    imported = replace(_session("s2", app_id, "k2"), run_id="run-2", source=SessionSource.IMPORTED)
    recorded = RecordedSession(imported, (turn,), EndReason.USER_ENDED)
    store_recorded_run(
        any_db,
        NewRun("run-2", "imported", ImportedRunPlan(name="i", source="dialogues.jsonl")),
        [recorded],
    )
    columns = (
        TurnRow.user_text,
        TurnRow.response_text,
        TurnRow.latency_ms,
        TurnRow.prompt_tokens,
        TurnRow.completion_tokens,
        TurnRow.meta,
    )
    with any_db.session() as s:
        rows = {
            session_id: tuple(rest)
            for session_id, *rest in s.execute(select(TurnRow.session_id, *columns))
        }
        ends = dict(s.execute(select(SessionRow.id, SessionRow.status)).tuples().all())
    assert rows["s2"] == rows["s1"]
    assert rows["s2"][2:] == (
        12.5,
        7,
        11,
        {"finish_reason": "stop", "replaced_unstorable": ["user_text", "response_text"]},
    )
    assert ends == {"s1": "complete", "s2": "complete"}
