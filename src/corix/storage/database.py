"""Engines, connections and schema migrations for SQLite (default) and PostgreSQL."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, Select, column, create_engine, event, inspect, select, table
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from corix.errors import CorixError
from corix.storage.migrations import HEAD_REVISION
from corix.storage.text import storable_parameters

if TYPE_CHECKING:
    from alembic.config import Config

DEFAULT_DB_DIR = Path(".corix")
DEFAULT_DB_FILE = "corix.db"


def default_url(directory: Path = DEFAULT_DB_DIR) -> str:
    return f"sqlite:///{directory / DEFAULT_DB_FILE}"


LOCK_WAIT_MS = 3000
"""How long a write waits for another connection's lock (SQLite's busy timeout,
PostgreSQL's ``lock_timeout``). corix's own writes (group commits, lease beats, web saves)
hold a lock for milliseconds, and readers never wait (WAL; MVCC); a lock held for seconds
is another process's long transaction. Waiting longer would keep a run calling models
while nothing can be stored: it stops (exit 7, resumable) after this wait instead. On
SQLite its end waits twice more (the run's status, its lease), so a locked database stops
a run within about 10 s; on PostgreSQL the run's row is rarely the one locked."""


def _tune_sqlite(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers (the web app, `corix runs show`) work while a run writes;
    # NORMAL sync keeps group commits durable across a process kill.
    cursor = dbapi_connection.cursor()
    # The wait first: switching a new file to WAL takes a lock another process may hold.
    cursor.execute(f"PRAGMA busy_timeout={LOCK_WAIT_MS}")
    _switch_to_wal(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _switch_to_wal(cursor: Any) -> None:
    # Connections switching a new file to WAL at once can deadlock (each holds a read lock
    # and wants the write lock); SQLite then fails one at once, without the busy wait. It
    # tries again until the wait a lock gets has passed (one in four sets of five processes
    # failed before).
    deadline = time.monotonic() + LOCK_WAIT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY  # or an extended BUSY_*
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _storable_statement(
    _conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, executemany: bool
) -> tuple[str, Any]:
    if executemany and isinstance(parameters, list):
        return statement, [storable_parameters(row) for row in parameters]
    return statement, storable_parameters(parameters)


class DatabaseMissingError(CorixError):
    """A command that only reads was pointed at a database that does not exist."""


def create_db_engine(
    url: str, *, create: bool = True, pool_size: int | None = None, name: str | None = None
) -> Engine:
    """An engine for ``url``; with ``create=False`` a SQLite file must exist already. On a
    server database ``pool_size`` caps its connections (no overflow; by default 10, and 20
    more under load) and ``name`` is the ``application_name`` the server shows for them."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            path = Path(parsed.database)
            if not create and not path.is_file():
                raise DatabaseMissingError(
                    f"no corix database at '{path}': `corix run`, `corix import` or "
                    "`corix demo` makes one (or give --db / $CORIX_DB)"
                )
            path.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _tune_sqlite)
    else:
        if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() in (
            "",
            "psycopg2",
        ):
            parsed = parsed.set(drivername="postgresql+psycopg")
        sizes = {"pool_size": 10, "max_overflow": 20}
        if pool_size is not None:
            sizes = {"pool_size": pool_size, "max_overflow": 0}
        connect_args = {"options": f"-c lock_timeout={LOCK_WAIT_MS}"}
        if name:
            connect_args["application_name"] = name
        engine = create_engine(parsed, pool_pre_ping=True, connect_args=connect_args, **sizes)
    event.listen(engine, "before_cursor_execute", _storable_statement, retval=True)
    return engine


class SchemaUpgradeError(CorixError):
    """Alembic cannot bring the schema to the newest migration (the database names a
    revision this corix does not know: a newer corix's)."""


def alembic_config(engine: Engine) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", "corix.storage:migrations")
    config.attributes["engine"] = engine
    return config


_VERSION_TABLE = table("alembic_version", column("version_num"))


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration (idempotent).

    A schema already at the newest is only read, with plain SQL: Alembic (11 MiB resident)
    is imported only to upgrade. An upgrade takes the database's write lock (one
    transaction, see the migrations' ``env.py``), which a database another process holds
    locked would refuse although there is nothing to do.
    """
    if _stored_revisions(engine) == {HEAD_REVISION}:
        return
    from alembic import command
    from alembic.util.exc import CommandError

    try:
        command.upgrade(alembic_config(engine), "head")
    except CommandError as exc:
        raise SchemaUpgradeError(str(exc)) from exc


def _stored_revisions(engine: Engine) -> set[str]:
    """The revisions Alembic's version table holds; none before the first migration (as
    Alembic's own ``get_current_heads`` reads them)."""
    with engine.connect() as connection:
        if not inspect(connection).has_table(_VERSION_TABLE.name):
            return set()
        return set(connection.scalars(select(_VERSION_TABLE.c.version_num)))


class Database:
    """One database: an engine and a session factory. Passed in, never global."""

    def __init__(
        self,
        url: str,
        *,
        run_migrations: bool = True,
        create: bool = True,
        pool_size: int | None = None,
        name: str | None = None,
    ) -> None:
        """``create=False`` opens only a database that exists (what reading commands use)."""
        self.url = url
        self.engine = create_db_engine(url, create=create, pool_size=pool_size, name=name)
        if run_migrations:
            migrate(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A unit of work: committed on success, rolled back on any error."""
        with self._sessions() as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()


T = TypeVar("T")


def scalar_chunks(db: Database, query: Select[tuple[T]], size: int) -> Iterator[list[T]]:
    """The values ``query`` selects, ``size`` at a time, from one ordered read.

    The read stays open while a chunk is used (a server-side cursor on PostgreSQL; on
    SQLite, WAL keeps writers going), so neither a list of every value nor a query per
    chunk that sorts the whole table again is needed. Load what a chunk names in a session
    of your own.
    """
    with db.session() as s:
        for chunk in s.scalars(query.execution_options(yield_per=size)).partitions():
            yield list(chunk)


IN_CHUNK = 500
"""Values per ``IN`` list: well under every backend's parameter limit (SQLite's is 32766,
PostgreSQL's 65535 per statement)."""


def in_chunks(values: Sequence[T], size: int = IN_CHUNK) -> Iterator[list[T]]:
    """``values`` ``size`` at a time: one ``IN`` list per query."""
    for start in range(0, len(values), size):
        yield list(values[start : start + size])
