"""Five processes opening one new database at once all succeed: one creates the schema,
the others wait for it and find it current (issue 37: two `corix run` on a new SQLite
file failed with "table web_users already exists"); on SQLite each of them first switches
the new file to WAL, which they do together without one failing."""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from corix.storage import Database
from corix.storage.database import create_db_engine

PROCESSES = 5
NEW_FILES = 40


def _open(url: str, start: multiprocessing.synchronize.Barrier) -> None:
    start.wait()
    Database(url).dispose()


def _connect_to_each_new_file(directory: str, start: multiprocessing.synchronize.Barrier) -> None:
    """Connect to ``NEW_FILES`` new files in turn, each at the moment the others do."""
    failed = False
    for number in range(NEW_FILES):
        engine = create_db_engine(f"sqlite:///{Path(directory) / f'{number}.db'}")
        start.wait()
        try:
            engine.connect().close()
        except OperationalError:
            failed = True  # kept going: the others wait for this process at the barrier
        engine.dispose()
    sys.exit(1 if failed else 0)


def _open_all_at_once(where: str, target: Callable[..., None] = _open) -> list[int | None]:
    # Forked, not spawned: the children start with SQLAlchemy and Alembic loaded, so they
    # reach the schema together instead of one import apart.
    context = multiprocessing.get_context("fork")
    start = context.Barrier(PROCESSES)
    children = [context.Process(target=target, args=(where, start)) for _ in range(PROCESSES)]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=120)
    return [child.exitcode for child in children]


def _revisions(url: str) -> list[str]:
    engine = create_engine(url)
    with engine.connect() as connection:
        found = [
            row[0] for row in connection.execute(text("SELECT version_num FROM alembic_version"))
        ]
    engine.dispose()
    return found


def test_five_processes_open_a_new_sqlite_file_at_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new' / 'corix.db'}"
    assert _open_all_at_once(url) == [0] * PROCESSES
    assert len(_revisions(url)) == 1


def test_connections_switching_new_files_to_wal_at_once_all_succeed(tmp_path: Path) -> None:
    # Two of them can deadlock, and SQLite fails one without waiting. Before the switch was
    # tried again this test failed 5 runs in 5 (with five fresh processes per new file, 7
    # files in 40 had one fail).
    assert _open_all_at_once(str(tmp_path), _connect_to_each_new_file) == [0] * PROCESSES


@pytest.mark.postgres
def test_five_processes_open_a_new_postgres_database_at_once(empty_postgres_url: str) -> None:
    url = empty_postgres_url
    assert _open_all_at_once(url) == [0] * PROCESSES
    assert len(_revisions(url.replace("postgresql://", "postgresql+psycopg://"))) == 1
