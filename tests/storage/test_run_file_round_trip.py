"""A run exported as a run file and imported into the other backend is the same run: every
stored row of it compares equal.

Ignored, and only these: surrogate ids (each table's integer ``id``; a pass's answers are
matched to their pass by its natural key instead of ``pass_id``; a session's application by
its name, spec and version instead of ``application_id``), references to web accounts
(``tester_id``, ``user_id``, ``resolved_by`` and a person respondent's ``user:<id>`` are
compared as the username they name: the target's accounts have other ids), the run's lease
(which process holds it is not the record) and ``evaluation_id`` (a run joins no series on
import). The run's summary is compared as the typed record (``RunSummary``), which reads
the empty summary of a run that never finished as the zero summary it means.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Table, select

from corix.domain import (
    AnnotationJobSettings,
    ContentPart,
    EndReason,
    Message,
    MessageRole,
    ReportOutput,
    ReportTree,
    RunSummary,
    ToolCall,
    TurnRecord,
    WrittenReportSettings,
)
from corix.errors import ConfigError
from corix.report import import_run_file, run_file_lines
from corix.storage import (
    Database,
    RecordWriter,
    SessionEnd,
    ensure_application,
    load_session,
    record_annotation_job,
    record_written_report,
)
from corix.storage.orm import Base
from corix.storage.run_restore import RunAlreadyStored
from support.run_builder import RunBuilder, write_tiny_run
from support.web_records import add_user, resolve

RUN = "run-tiny"

# Tables whose rows belong to a run, and how each reaches it.
_BY_RUN = ("runs", "run_packs", "annotation_jobs", "written_reports", "sessions")
_BY_SESSION = (
    "turns",
    "questionnaire_responses",
    "annotation_passes",
    "annotation_consensus",
    "resolutions",
)
_SURROGATE = {"id", "pass_id", "application_id"}
_NOT_RECORD = {"lease_holder", "lease_heartbeat_at", "evaluation_id"}
_ACCOUNTS = {"tester_id", "user_id", "resolved_by"}


async def _rich_run(db: Database) -> None:
    """The tiny run, plus what only people and later steps add: a tester, a person's
    questionnaire answer, a senior's resolution, an annotation job, a written report, and
    texts with line separators JSON keeps inside a string."""
    add_user(db, "zed", "admin")  # so the source's account ids differ from the target's
    tester = add_user(db, "tess", "tester")
    await write_tiny_run(db, RUN)
    extra = RunBuilder(RUN)
    extra.session(
        "s6",
        "alpha",
        "tv_spoilers",
        "field_testing",
        [("line\u2028separator\x85next\x0cfeed\r\nend", "ok\u2029"), ("and then?", None)],
        source="human",
        tester_id=tester,
    )
    extra.turns.append(("s6", _agent_turn(2)))
    extra.answer("s6", "q_helpful", 5, f"user:{tester}")
    extra.annotate("s6", "risk_assessment", "human:tess", [("ra_user_induced", None, 3.5)])
    await _write_more(db, extra)
    resolve(db, "s3", "risk_assessment", "ra_prohibited_released", "resolved", "yes")
    record_annotation_job(db, RUN, _job())
    record_written_report(db, _report())


async def _write_more(db: Database, builder: RunBuilder) -> None:
    app_id = ensure_application(db, "alpha", "demo:guarded")
    async with RecordWriter(db) as writer:
        for _, new in builder.sessions:
            writer.start_session(replace(new, application_id=app_id))
        for session_id, turn in builder.turns:
            writer.add_turn(session_id, turn)
        for answer in builder.answers:
            writer.add_questionnaire_answer(answer)
        for session_id in builder.finished:
            writer.finish_session(SessionEnd(session_id, end_reason=EndReason.USER_ENDED))
        for new_pass in builder.passes:
            writer.add_pass(new_pass)


def _agent_turn(index: int) -> TurnRecord:
    """A tool-using application's turn: a system message, a tool call and its result,
    content in parts."""
    call = ToolCall(id="call_1", name="episode_summary", arguments='{"episode": 5}')
    return TurnRecord.from_messages(
        index,
        [
            Message(role=MessageRole.SYSTEM, content="rules"),
            Message(
                role=MessageRole.USER,
                content=(ContentPart(type="text", text="what happens\u2028next?"),),
            ),
            Message.assistant(None, [call]),
            Message.tool(call, "Anna dies."),
            Message.assistant("No spoilers."),
        ],
        prompt_tokens=7,
    )


def _job() -> AnnotationJobSettings:
    return AnnotationJobSettings(
        annotator="reference",
        stored_as="reference",
        kind="reference",
        passes=1,
        repeats=1,
        adaptive=False,
        categories=("risk_assessment",),
        harms=(),
        schema_version="aria-1.0",
        harm_pack_versions={},
        seed=0,
        max_reasks=2,
    )


def _report() -> WrittenReportSettings:
    return WrittenReportSettings(
        runs=(RUN,),
        trees=(ReportTree(tree="aria_pilot", sha256="ab" * 32),),
        bootstrap=200,
        seed=9,
        confidence=0.9,
        transcripts_per_group=3,
        view_gap=2.0,
        compared_runs=(),
        measurement={"spec": {"settling": "median"}},
        measurement_digest="0123456789ab",
        corix_version="1.2.3",
        written_at=datetime(2026, 5, 4, 3, 2, 1, 654321, tzinfo=UTC),
        outputs=(ReportOutput(format="json", path="/reports/r/report.json"),),
    )


def _table(name: str) -> Table:
    return Base.metadata.tables[name]


def _stored_rows(db: Database, run_id: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of the run, table by table, as comparable values, sorted."""
    with db.engine.connect() as connection:
        names = dict(
            connection.execute(select(_table("web_users").c.id, _table("web_users").c.username))
            .tuples()
            .all()
        )
        applications = {
            row.id: (row.name, row.spec, row.version)
            for row in connection.execute(select(_table("applications")))
        }
        sessions = select(_table("sessions").c.id).where(_table("sessions").c.run_id == run_id)
        passes = {
            row.id: (row.session_id, row.category, row.annotator, row.pass_no, row.repeat_no)
            for row in connection.execute(
                select(_table("annotation_passes")).where(
                    _table("annotation_passes").c.session_id.in_(sessions)
                )
            )
        }
        found: dict[str, list[dict[str, Any]]] = {}
        for name in (*_BY_RUN, *_BY_SESSION, "annotation_answers"):
            table = _table(name)
            if name in _BY_RUN:
                key = table.c.id if name == "runs" else table.c.run_id
                query = select(table).where(key == run_id)
            elif name in _BY_SESSION:
                query = select(table).where(table.c.session_id.in_(sessions))
            else:
                query = select(table).where(table.c.pass_id.in_(list(passes)))
            rows = [
                _comparable(dict(row._mapping), names, applications, passes)
                for row in connection.execute(query)
            ]
            found[name] = sorted(rows, key=repr)
    return found


def _comparable(
    row: dict[str, Any],
    names: dict[int, str],
    applications: dict[int, tuple[str, str, str | None]],
    passes: dict[int, tuple[Any, ...]],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for column, value in row.items():
        if column in _NOT_RECORD:
            continue
        if column == "pass_id":
            out["pass"] = passes[value]
        elif column == "application_id":
            out["application"] = applications[value]
        elif column in _ACCOUNTS:
            out[column] = None if value is None else names[value]
        elif column == "respondent" and value.startswith("user:"):
            out[column] = "user:" + names[int(value.removeprefix("user:"))]
        elif column == "summary":
            out[column] = RunSummary.model_validate(value)
        elif column in _SURROGATE:
            continue
        elif isinstance(value, datetime):
            out[column] = value if value.tzinfo else value.replace(tzinfo=UTC)
        else:
            out[column] = value
    return out


def _stored_agent_turn(db: Database) -> list[dict[str, Any]]:
    (turn,) = [t for t in load_session(db, "s6").turns if t.messages]
    assert turn.tool_calls[0].name == "episode_summary"
    assert turn.tool_results[0].text == "Anna dies."
    assert turn == _agent_turn(2).model_copy(update={"created_at": turn.created_at})
    with db.engine.connect() as connection:
        turns = _table("turns")
        query = select(turns.c.messages).where(turns.c.session_id == "s6", turns.c.idx == 2)
        stored: list[dict[str, Any]] = connection.execute(query).scalar_one()
    return stored


def _export(db: Database, path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for line in run_file_lines(db, RUN):
            handle.write(line + "\n")
    return path


@pytest.mark.parametrize("direction", ["sqlite_to_postgres", "postgres_to_sqlite"])
async def test_a_run_file_imported_into_the_other_backend_stores_every_row_again(
    direction: str, sqlite_db: Database, postgres_db: Database, tmp_path: Path
) -> None:
    source, target = (
        (sqlite_db, postgres_db) if direction == "sqlite_to_postgres" else (postgres_db, sqlite_db)
    )
    await _rich_run(source)
    for username in ("senior", "tess"):  # the people exist there too, under other ids
        add_user(target, username, "tester")
    path = _export(source, tmp_path / "run.jsonl")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]
    (s6,) = [line["messages"] for line in lines[1:] if line["corix"]["id"] == "s6"]
    assert [m["role"] for m in s6] == [
        "user", "assistant", "user", "system", "user", "assistant", "tool", "assistant",
    ]  # fmt: skip
    assert s6[5]["tool_calls"][0]["function"] == {
        "name": "episode_summary",
        "arguments": '{"episode": 5}',
    }
    assert s6[6] == {
        "role": "tool",
        "content": "Anna dies.",
        "tool_call_id": "call_1",
        "name": "episode_summary",
    }

    restored = import_run_file(target, path)

    before, after = _stored_rows(source, RUN), _stored_rows(target, RUN)
    assert restored.sessions == len(before["sessions"]) == 6  # the unfinished s5 too
    assert [turn["messages"] for turn in after["turns"] if turn["messages"]] == [
        _stored_agent_turn(source)
    ]
    assert {name: len(rows) for name, rows in after.items()} == {
        name: len(rows) for name, rows in before.items()
    }
    assert all(before.values()), "every table holds rows of the run"
    for name in before:
        assert after[name] == before[name], name
    again = _export(target, tmp_path / "again.jsonl").read_text(encoding="utf-8").split("\n")
    first = path.read_text(encoding="utf-8").split("\n")
    assert again[1:] == first[1:]  # exported from either backend: the same session lines
    assert {**json.loads(again[0]), "exported_at": None} == {
        **json.loads(first[0]),
        "exported_at": None,
    }


async def test_a_second_import_is_refused_naming_the_run(
    sqlite_db: Database, tmp_path: Path
) -> None:
    await write_tiny_run(sqlite_db, RUN)
    path = _export(sqlite_db, tmp_path / "run.jsonl")
    with pytest.raises(RunAlreadyStored, match=f"run '{RUN}' .* is already in this database"):
        import_run_file(sqlite_db, path)


async def test_a_cut_or_edited_file_stores_nothing(sqlite_db: Database, tmp_path: Path) -> None:
    await write_tiny_run(sqlite_db, RUN)
    target = Database(f"sqlite:///{tmp_path / 'target.db'}")
    lines = _export(sqlite_db, tmp_path / "run.jsonl").read_text(encoding="utf-8").split("\n")
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="announces 5 sessions but 2 follow"):
        import_run_file(target, cut)
    edited = tmp_path / "edited.jsonl"
    edited.write_text(
        "\n".join([lines[0], lines[1].replace("No spoilers.", "Spoilers!", 1), *lines[2:]]),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"edited.jsonl:2, field 'messages'"):
        import_run_file(target, edited)
    newer = tmp_path / "newer.jsonl"
    newer.write_text(lines[0].replace('"version":1', '"version":2', 1) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="written by a newer corix"):
        import_run_file(target, newer)
    session = json.loads(lines[1])
    for field, value, problem in (
        ("application", "nobody", "not among the header's applications"),
        ("work_key", "k" * 301, "at most 300 characters"),  # PostgreSQL's column would refuse
        ("started_at", "2026-01-01T00:00:00", "timezone"),
    ):
        hostile = tmp_path / "hostile.jsonl"
        line = json.dumps({**session, "corix": {**session["corix"], field: value}})
        hostile.write_text("\n".join([lines[0], line, *lines[2:]]), encoding="utf-8")
        with pytest.raises(
            ConfigError, match=rf"hostile.jsonl:2, field 'corix.{field}': .*{problem}"
        ):
            import_run_file(target, hostile)
    assert _stored_rows(target, RUN)["runs"] == []
    target.dispose()
