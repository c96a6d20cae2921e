"""`corix export --format corix` and `corix import`: a run travels between databases whole,
and a plain JSONL export imports as dialogues."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import invoke

from corix.domain import Plan, RunDocument
from corix.storage import Database, count_complete_sessions, iter_sessions
from support.run_builder import write_tiny_run


def _invoke(db: Database, *args: str) -> tuple[int, str]:
    code, out, err = invoke(*args, "--db", db.url)
    return code, " ".join((out + err).split())


async def test_a_run_file_imports_as_the_same_run_once(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await write_tiny_run(sqlite_db)
    path = tmp_path / "run.jsonl"
    code, output = _invoke(sqlite_db, "export", run_id, "--format", "corix", "-o", str(path))
    assert code == 0, output
    assert f"wrote run {run_id} (5 sessions)" in output
    header = json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])
    assert (header["format"], header["version"], header["run"]["id"]) == ("corix-run", 1, run_id)

    other = Database(f"sqlite:///{tmp_path / 'other.db'}")
    code, output = _invoke(other, "import", str(path))
    assert code == 0, output
    assert f"imported run {run_id} (5 sessions)" in output

    code, output = _invoke(other, "import", str(path))
    assert code == 2
    assert f"run '{run_id}' ('test {run_id}') is already in this database" in output
    assert f"corix runs delete {run_id}" in output
    code, output = _invoke(other, "import", str(path), "--name", "again")
    assert code == 2
    assert "--name, --application, --scenario and --level do not apply" in output
    other.dispose()


async def test_a_plain_jsonl_export_imports_as_dialogues(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await write_tiny_run(sqlite_db)
    path = tmp_path / "sessions.jsonl"
    assert _invoke(sqlite_db, "export", run_id, "-o", str(path))[0] == 0
    other = Database(f"sqlite:///{tmp_path / 'other.db'}")
    code, output = _invoke(other, "import", str(path))
    assert code == 0, output
    imported = output.split("as run ")[1].split()[0]
    exported = {s.id: s for s in iter_sessions(sqlite_db, run_id)}
    back = list(iter_sessions(other, imported))
    assert len(back) == count_complete_sessions(sqlite_db, [run_id]) == 4
    for session in back:
        original = exported[session.provenance.conversation_id or ""]
        assert (session.application, session.scenario, session.level) == (
            original.application,
            original.scenario,
            original.level,
        )
        assert [(t.user_text, t.response_text) for t in session.turns] == [
            (t.user_text, t.response_text) for t in original.turns
        ]
    other.dispose()


def test_a_run_file_holds_one_run(sqlite_db: Database) -> None:
    code, output = _invoke(sqlite_db, "export", "--series", "pilot", "--format", "corix")
    assert code == 2
    assert "--format corix writes one run" in output


async def test_runs_show_json_is_the_run_files_document_and_reads_back(
    sqlite_db: Database, tmp_path: Path
) -> None:
    """Issue 39: one typed document names a whole run, the same in `runs show --json` and
    on a run file's first line, and it reads back with its plan typed."""
    run_id = await write_tiny_run(sqlite_db)
    code, shown, _ = invoke("runs", "show", run_id, "--json", "--db", sqlite_db.url)
    assert code == 0, shown
    document = RunDocument.model_validate_json(shown)
    assert isinstance(document.run.plan, Plan) and document.run.plan.name == "t"
    assert document.sessions == count_complete_sessions(sqlite_db, [run_id]) + 1  # unfinished

    path = tmp_path / "run.jsonl"
    assert _invoke(sqlite_db, "export", run_id, "--format", "corix", "-o", str(path))[0] == 0
    header = RunDocument.model_validate_json(path.read_text(encoding="utf-8").split("\n", 1)[0])
    assert header.model_copy(update={"exported_at": document.exported_at}) == document
    assert json.loads(shown)["run"]["plan"] == document.run.plan.model_dump(mode="json")
