"""Storage failures through the real ``corix`` command: ``corix run`` in a process of its
own meets a database that stops taking writes, stops within seconds with one line naming
the cause and exit code 7, and a separate ``corix run --resume RUN`` completes the run
once the database works again (the dead process's lease is stale by then: nobody clears
it by hand).

The faults are real and come from outside the process: another connection's exclusive
lock (SQLite); a file-size limit set on the running process (``prlimit``, what a full
disk or a quota does to its writes: the file system refuses them; SQLite says "disk I/O
error"); a database turned read-only by its server (PostgreSQL), whose existing
connections are ended so the process reconnects to a read-only database.

Each test starts two corix processes (seconds each on a shared machine), so they run with
``-m slow``; tests/execution/faults/test_storage_failures.py is the fast subset (the same faults in
this process, and a database locked at start through the CLI).
"""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from corix.cli.exit_codes import ExitCode
from corix.storage import Database, count_complete_sessions, get_run, list_runs
from corix.storage.sessions import session_states

TESTS_DIR = Path(__file__).resolve().parents[2]
STOPS_WITHIN_S = 15.0
"""The writer's wait for the lock, then the run's end and its lease each wait once more
(``LOCK_WAIT_MS`` each), with room for a shared machine."""


def _plan(path: Path) -> Path:
    path.write_text(
        "name: stopped\nseed: 2\nconcurrency: 4\n"
        "applications:\n  - name: slow\n    spec: python:support.apps:EchoApp\n"
        "    options: {delay_ms: 20}\n"
        "scenarios: [tv_spoilers, meal_planner]\nlevels:\n  model_testing: {repeats: 8}\n",
        encoding="utf-8",
    )
    return path


def _env(db_url: str) -> dict[str, str]:
    """This process's environment (its PYTHONPATH runs this tree's corix) plus the tests'
    support modules and the database."""
    paths = [str(TESTS_DIR), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "CORIX_DB": db_url}


def _corix(db_url: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "corix.cli.main", *args],
        env=_env(db_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _complete(db: Database) -> int:
    return count_complete_sessions(db, [run.id for run in list_runs(db)])


def _wait_for_sessions(db: Database, process: subprocess.Popen[str], at_least: int) -> int:
    deadline = time.monotonic() + 60
    while (done := _complete(db)) < at_least:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.02)
    return done


def _resume_completes(db: Database, db_url: str) -> None:
    """A separate ``corix run --resume`` finishes the run; each work item is stored once."""
    (run,) = list_runs(db)
    resumed = _corix(db_url, "run", "--resume", run.id)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == ExitCode.OK, out + err
    assert get_run(db, run.id).status == "complete"
    states = session_states(db)
    keys = Counter(state.work_key for state in states)
    errors = sum(state.error_turns for state in states)
    assert set(keys.values()) == {1} and errors == 0


def _stopped_with(process: subprocess.Popen[str], since: float, cause: str) -> None:
    """The run stopped soon, exit 7, one line on stderr that names ``cause``."""
    out, err = process.communicate(timeout=60)
    took = time.monotonic() - since
    assert process.returncode == ExitCode.STORAGE, out + err
    assert took < STOPS_WITHIN_S, f"stopped {took:.1f} s after the fault"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and cause in lines[0], err
    assert "the database stopped taking writes" in lines[0], err


@pytest.mark.slow  # ~20 s: two corix processes and the lock's waits
def test_a_database_locked_during_a_run_stops_it_and_resume_completes_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "corix.db"
    db_url = f"sqlite:///{path}"
    db = Database(db_url)
    process = _corix(db_url, "run", str(_plan(tmp_path / "plan.yaml")))
    other = sqlite3.connect(path, isolation_level=None)
    try:
        committed = _wait_for_sessions(db, process, 6)
        other.execute("PRAGMA busy_timeout = 5000")
        other.execute("BEGIN EXCLUSIVE")  # another process's write lock, held until the end
        locked = time.monotonic()
        _stopped_with(process, locked, "database is locked")
    finally:
        if other.in_transaction:
            other.execute("ROLLBACK")
        other.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert _complete(db) >= committed  # nothing committed was lost
    _resume_completes(db, db_url)
    db.dispose()


@pytest.mark.slow  # ~10 s: two corix processes
def test_a_full_disk_during_a_run_stops_it_and_resume_completes_it(tmp_path: Path) -> None:
    path = tmp_path / "corix.db"
    db_url = f"sqlite:///{path}"
    db = Database(db_url)
    process = _corix(db_url, "run", str(_plan(tmp_path / "plan.yaml")))
    try:
        committed = _wait_for_sessions(db, process, 6)
        # No write of the process goes past byte 0 of a file any more (pipes are not files).
        resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (0, 0))
        _stopped_with(process, time.monotonic(), "disk I/O error")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert _complete(db) >= committed
    _resume_completes(db, db_url)
    db.dispose()


def _end_writable_connections(admin: Any, name: str, since: float) -> int:
    """End the idle connections to ``name`` opened before ``since`` (epoch s); how many
    such connections are left."""
    rows = admin.execute(
        text(
            "SELECT pid, state FROM pg_stat_activity WHERE datname = :name "
            "AND pid <> pg_backend_pid() AND backend_start < to_timestamp(:since)"
        ),
        {"name": name, "since": since},
    ).all()
    for pid, state in rows:
        if state == "idle":  # one in use is ended when it is back in its pool
            admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    return len(rows)


@pytest.mark.slow  # ~11 s: two corix processes
def test_a_read_only_database_during_a_run_stops_it_and_resume_completes_it(
    postgres_db: Database, tmp_path: Path
) -> None:
    db_url = postgres_db.url
    name = postgres_db.engine.url.database
    assert name is not None
    admin_engine = create_engine(
        postgres_db.engine.url.set(database="postgres"), isolation_level="AUTOCOMMIT"
    )
    process = _corix(db_url, "run", str(_plan(tmp_path / "plan.yaml")))
    try:
        with admin_engine.connect() as admin:
            committed = _wait_for_sessions(postgres_db, process, 6)
            admin.execute(text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on'))
            since = time.time()
            faulted = time.monotonic()
            while process.poll() is None and _end_writable_connections(admin, name, since):
                time.sleep(0.01)
            _stopped_with(process, faulted, "read-only")
            admin.execute(text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = off'))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        admin_engine.dispose()
    postgres_db.dispose()  # its connections from now on are writable again
    assert _complete(postgres_db) >= committed
    _resume_completes(postgres_db, db_url)


@pytest.mark.slow  # ~10 s: two corix processes
def test_a_postgres_table_locked_during_a_run_stops_it_and_resume_completes_it(
    postgres_db: Database, tmp_path: Path
) -> None:
    process = _corix(postgres_db.url, "run", str(_plan(tmp_path / "plan.yaml")))
    other = postgres_db.engine.connect()
    try:
        committed = _wait_for_sessions(postgres_db, process, 6)
        transaction = other.begin()
        # Another process's lock: reads go on, every write to these tables waits.
        other.execute(text("LOCK TABLE sessions, turns IN EXCLUSIVE MODE"))
        _stopped_with(process, time.monotonic(), "lock timeout")
        transaction.rollback()
    finally:
        other.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert _complete(postgres_db) >= committed
    _resume_completes(postgres_db, postgres_db.url)
