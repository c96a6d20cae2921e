"""A schema upgrade cut short at any statement leaves the database as it was, and the next
command finishes the upgrade with every row there.

Python's sqlite3 used to commit before every DDL statement: a `kill -9` mid-upgrade left a
migration's tables behind while the version said the one before, and every later command
exited 2 "table … already exists". Here the cut is an exception raised before the N-th
statement of the upgrade, for N spread over the whole upgrade (every statement under
``-m slow``), and a real SIGKILL of a process upgrading.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import create_engine, event, inspect, text

from corix.domain.plan import load_plan
from corix.execution import execute_plan
from corix.storage import Database
from corix.storage.database import alembic_config

OLD_REVISION = "run_packs"
"""Six migrations back: tables made, columns added, tables rebuilt (SQLite batch mode)."""


class Cut(Exception):
    """Where the upgrade's process 'died'."""


def _counts(url: str) -> dict[str, int]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table: int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
                for table in ("runs", "applications", "sessions", "turns")
            }
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def old_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with a run in it, at an older schema; each test upgrades a copy."""
    folder = tmp_path_factory.mktemp("old")
    path = folder / "old.db"
    db = Database(f"sqlite:///{path}")
    plan = folder / "plan.yaml"
    plan.write_text(
        "name: old\nseed: 1\napplications:\n  - {name: a, spec: 'demo:guarded'}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {sessions: 3}\n",
        encoding="utf-8",
    )
    asyncio.run(execute_plan(load_plan(plan), db))
    command.downgrade(alembic_config(db.engine), OLD_REVISION)
    db.dispose()  # the last connection closing folds the WAL into the file
    return path


def _copy(old: Path, folder: Path) -> str:
    target = folder / "copy.db"
    shutil.copy(old, target)
    return f"sqlite:///{target}"


def _upgrade_statements(old: Path, folder: Path) -> int:
    url = _copy(old, folder / "count")
    seen = 0

    def count(*_args: Any) -> None:
        nonlocal seen
        seen += 1

    db = Database(url, run_migrations=False)
    event.listen(db.engine, "before_cursor_execute", count)
    command.upgrade(alembic_config(db.engine), "head")
    db.dispose()
    return seen


def _cut_at(url: str, statement: int) -> None:
    db = Database(url, run_migrations=False)
    seen = 0

    def cut(*_args: Any) -> None:
        nonlocal seen
        seen += 1
        if seen == statement:
            raise Cut(f"statement {statement}")

    event.listen(db.engine, "before_cursor_execute", cut)
    try:
        with pytest.raises(Cut):
            command.upgrade(alembic_config(db.engine), "head")
    finally:
        db.dispose()


def _check_cuts(old: Path, folder: Path, every: int) -> None:
    expected = _counts(f"sqlite:///{old}")
    (folder / "count").mkdir()
    total = _upgrade_statements(old, folder)
    assert total > 20
    for statement in range(2, total, every):
        trial = folder / f"cut-{statement}"
        trial.mkdir()
        url = _copy(old, trial)
        _cut_at(url, statement)
        Database(url).dispose()  # the next command: upgrades to the newest schema
        assert _counts(url) == expected, f"cut at statement {statement} of {total}"
        engine = create_engine(url)
        assert "annotation_jobs" in inspect(engine).get_table_names()
        engine.dispose()


def test_an_upgrade_cut_short_anywhere_is_finished_by_the_next_command(
    old_database: Path, tmp_path: Path
) -> None:
    _check_cuts(old_database, tmp_path, every=9)


@pytest.mark.slow
def test_an_upgrade_cut_short_at_every_statement_is_finished(
    old_database: Path, tmp_path: Path
) -> None:
    _check_cuts(old_database, tmp_path, every=1)


def test_a_process_killed_while_upgrading_leaves_a_database_the_next_one_upgrades(
    old_database: Path, tmp_path: Path
) -> None:
    expected = _counts(f"sqlite:///{old_database}")
    upgrade = "import sys; from corix.storage import Database; Database(sys.argv[1])"
    for delay in (0.05, 0.15, 0.3):
        trial = tmp_path / f"kill-{delay}"
        trial.mkdir()
        url = _copy(old_database, trial)
        child = subprocess.Popen([sys.executable, "-c", upgrade, url])
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
        Database(url).dispose()
        assert _counts(url) == expected


def test_a_postgres_upgrade_cut_short_is_finished_by_the_next_command(
    postgres_url: str, tmp_path: Path
) -> None:
    """PostgreSQL runs DDL in transactions: the same cuts, on one database taken back to
    the old schema after each."""
    db = Database(postgres_url)
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: old\nseed: 1\napplications:\n  - {name: a, spec: 'demo:guarded'}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {sessions: 3}\n",
        encoding="utf-8",
    )
    asyncio.run(execute_plan(load_plan(plan), db))
    db.dispose()
    expected = _counts(postgres_url)
    for statement in (3, 17):  # two points; every ninth (every one, slow) on SQLite
        _downgrade(postgres_url)
        _cut_at(postgres_url, statement)
        Database(postgres_url).dispose()  # the next command: upgrades to the newest schema
        assert _counts(postgres_url) == expected, f"cut at statement {statement}"
        engine = create_engine(postgres_url)
        assert "annotation_jobs" in inspect(engine).get_table_names()
        engine.dispose()


def _downgrade(url: str) -> None:
    db = Database(url, run_migrations=False)
    command.downgrade(alembic_config(db.engine), OLD_REVISION)
    db.dispose()
