"""Storage failures stop the run: a full disk, a read-only database or one locked by another
process stops the model calls within seconds, marks the run interrupted where it still can,
says why in one line, and loses nothing committed: a resume completes the run.

The faults are real: SQLite's own "database or disk is full" (its page limit set to the
pages in use), PostgreSQL's read-only transactions, and an exclusive lock held by another
connection.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from sqlalchemy import create_engine, event, text

from corix.cli.common import run_cli
from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.domain.plan import load_plan
from corix.execution import RunResult, RunStatus, execute_plan
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.storage import Database, count_complete_sessions, list_runs, run_lease, shown_status
from corix.storage.sessions import session_states

STOPS_WITHIN_S = 5.0


def _plan(path: Path, base_url: str) -> Path:
    path.write_text(
        "name: storage\nseed: 4\nconcurrency: 8\n"
        f'applications:\n  - name: app\n    spec: "openai:{base_url}"\n'
        "    options: {model: mock}\n"
        "scenarios: [tv_spoilers, meal_planner]\nlevels:\n  model_testing: {repeats: 4}\n",
        encoding="utf-8",
    )
    return path


def _complete(db: Database) -> int:
    return count_complete_sessions(db, [run.id for run in list_runs(db)])


async def _requests(base_url: str) -> int:
    async with (
        aiohttp.ClientSession() as http,
        http.get(base_url.removesuffix("/v1") + "/mock/stats") as reply,
    ):
        stats: dict[str, Any] = await reply.json()
    return int(stats["requests"])


def _lease_goes_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lease this process could not release is left as a dead process's would be: stale
    once its heartbeat is older than ``STALE_AFTER_S``, here at once. The run is free to
    resume."""
    monkeypatch.setattr(run_lease, "STALE_AFTER_S", 0.0)


async def _run_until_fault(
    db: Database,
    plan_path: Path,
    base_url: str,
    fault: Any,
    heal: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> RunResult:
    """Run the plan, ``fault()`` the database after a few sessions, check the stop, ``heal()``
    it, resume, and check the finished run holds each work item once, with no error."""
    running = asyncio.create_task(execute_plan(load_plan(plan_path), db))
    while _complete(db) < 6:
        assert not running.done(), running.result()
        await asyncio.sleep(0.01)
    committed = _complete(db)
    await asyncio.to_thread(fault)
    faulted = time.monotonic()
    result = await asyncio.wait_for(running, timeout=60)
    assert time.monotonic() - faulted < STOPS_WITHIN_S
    calls = await _requests(base_url)
    await asyncio.sleep(0.5)
    assert await _requests(base_url) == calls  # no model is called any more
    assert result.status == RunStatus.INTERRUPTED
    assert result.storage_error is not None
    assert "the database stopped taking writes" in (result.error or "")
    assert not result.stats.refused_records  # no flood of refusals
    await asyncio.to_thread(heal)
    _lease_goes_stale(monkeypatch)
    assert _complete(db) >= committed  # nothing committed was lost
    resumed = await execute_plan(load_plan(plan_path), db, resume_run=result.run_id)
    assert resumed.status == RunStatus.COMPLETE, resumed.error
    states = session_states(db)
    keys = Counter(state.work_key for state in states)
    errors = sum(state.error_turns for state in states)
    assert set(keys.values()) == {1} and errors == 0
    return result


async def test_a_full_disk_stops_the_run_and_resume_completes_it(
    sqlite_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        pages = cursor.execute("PRAGMA page_count").fetchone()[0]
        cursor.execute(f"PRAGMA max_page_count = {pages}")
        cursor.close()

    def fault() -> None:
        event.listen(sqlite_db.engine, "connect", full)
        sqlite_db.engine.dispose()  # every connection from now on sees the disk full

    def heal() -> None:
        event.remove(sqlite_db.engine, "connect", full)
        sqlite_db.engine.dispose()

    async with running_mock_server(MockServerConfig(latency_ms=50)) as base_url:
        plan_path = _plan(tmp_path / "plan.yaml", base_url)
        result = await _run_until_fault(sqlite_db, plan_path, base_url, fault, heal, monkeypatch)
    assert "full" in (result.storage_error or "")


async def test_a_read_only_database_stops_the_run_and_resume_completes_it(
    postgres_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = postgres_db.engine.url.database
    admin = create_engine(
        postgres_db.engine.url.set(database="postgres"), isolation_level="AUTOCOMMIT"
    )

    def read_only(on: bool) -> None:
        with admin.connect() as connection:
            connection.execute(
                text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = {on}')
            )
        postgres_db.engine.dispose()  # connections from now on start read-only (or not)

    try:
        async with running_mock_server(MockServerConfig(latency_ms=50)) as base_url:
            plan_path = _plan(tmp_path / "plan.yaml", base_url)
            result = await _run_until_fault(
                postgres_db,
                plan_path,
                base_url,
                lambda: read_only(True),
                lambda: read_only(False),
                monkeypatch,
            )
    finally:
        admin.dispose()
    assert "read-only" in (result.storage_error or "")


def test_a_database_locked_at_start_is_one_line_and_its_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "corix.db"
    Database(f"sqlite:///{path}").dispose()
    plan_path = tmp_path / "plan.yaml"
    plan_path.write_text(
        "name: locked\nseed: 1\napplications:\n  - {name: demo, spec: 'demo:guarded'}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {repeats: 1}\n",
        encoding="utf-8",
    )
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA busy_timeout = 0")
    other.execute("BEGIN EXCLUSIVE")  # another process's write lock
    try:
        with pytest.raises(SystemExit) as end:
            run_cli(app, ["run", str(plan_path), "--db", f"sqlite:///{path}"])
    finally:
        other.execute("ROLLBACK")
        other.close()
    printed = capsys.readouterr()
    assert end.value.code == ExitCode.STORAGE
    lines = printed.err.strip().splitlines()
    expected = f"error: the database file '{path}' takes no writes: database is locked"
    assert lines == [expected], printed.err


def _echo_plan(path: Path) -> Path:
    path.write_text(
        "name: locked\nseed: 2\nconcurrency: 4\n"
        "applications:\n  - name: slow\n    spec: python:support.apps:EchoApp\n"
        "    options: {delay_ms: 10}\n"
        "scenarios: [tv_spoilers, meal_planner]\nlevels:\n  model_testing: {repeats: 3}\n",
        encoding="utf-8",
    )
    return path


def _corix_exits(args: list[str]) -> int:
    with pytest.raises(SystemExit) as end:
        run_cli(app, args)
    return int(end.value.code or 0)


@pytest.mark.parametrize("tables", ["sessions, turns", "runs, sessions, turns"])
def test_a_postgres_table_locked_during_a_run_stops_it_named_and_resume_completes_it(
    postgres_db: Database,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tables: str,
) -> None:
    """Issue 35's row 10: another connection's table lock makes the run's writes wait. The
    run stops after one lock wait (here 0.3 s) with exit 7 and one line naming the run, the
    cause and that nothing committed is lost. Its row says ``interrupted`` with no holder;
    with ``runs`` locked too its end cannot be written, and it is listed ``stale`` (never
    ``running``) once its holder is gone. A resume completes it, each work item once."""
    monkeypatch.setattr("corix.storage.database.LOCK_WAIT_MS", 300)
    plan_path = _echo_plan(tmp_path / "plan.yaml")
    other = postgres_db.engine.connect()
    committed: list[int] = []

    def lock_after_six_sessions() -> None:
        deadline = time.monotonic() + 30
        while (done := _complete(postgres_db)) < 6 and time.monotonic() < deadline:
            time.sleep(0.005)
        other.begin()
        # Another process's lock: reads go on, every write to these tables waits.
        other.execute(text(f"LOCK TABLE {tables} IN EXCLUSIVE MODE"))
        committed.append(done)

    locker = threading.Thread(target=lock_after_six_sessions)
    locker.start()
    try:
        code = _corix_exits(["run", str(plan_path), "--db", postgres_db.url])
    finally:
        locker.join()
        other.rollback()
        other.close()
    err = capsys.readouterr().err
    assert code == ExitCode.STORAGE, err
    (said,) = [line for line in err.splitlines() if not line.startswith("sessions: ")]
    (run,) = list_runs(postgres_db)
    assert said.startswith(f"error: run {run.id} stopped: the database stopped taking writes")
    assert "lock timeout" in said and said.endswith("nothing committed is lost")
    if tables.startswith("runs"):
        assert run.status == "running"  # its holder, this process, is alive: held
        _lease_goes_stale(monkeypatch)  # as it is once the process has ended
        assert shown_status(run) == "stale"
    else:
        assert (run.status, run.lease_holder) == ("interrupted", None)
    assert committed and _complete(postgres_db) >= committed[0]
    assert _corix_exits(["run", "--resume", run.id, "--db", postgres_db.url]) == ExitCode.OK
    keys = Counter(state.work_key for state in session_states(postgres_db))
    assert set(keys.values()) == {1}
    assert list_runs(postgres_db)[0].status == "complete"
