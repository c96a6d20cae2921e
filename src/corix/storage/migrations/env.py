"""Alembic environment: corix passes its engine in; there is no alembic.ini.

An upgrade is one transaction on both backends, so a process killed in the middle of one
leaves the schema as it was and the next command upgrades again. PostgreSQL's DDL is
transactional as it is; Python's sqlite3 commits before every DDL statement on its own
(its legacy transaction handling), which once left a migration's tables behind while the
version still said the one before: every later command then failed "table … already
exists". So on SQLite the driver's own transaction handling is switched off for the
upgrade and the transaction is begun here, with ``BEGIN IMMEDIATE`` (SQLite's DDL is
transactional too).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from alembic import context
from sqlalchemy import Connection

from corix.storage.migration_lock import migration_lock
from corix.storage.orm import Base

config = context.config
engine = config.attributes["engine"]


def _foreign_keys(connection: Connection, *, on: bool) -> None:
    """SQLite's foreign-key enforcement, set outside any transaction (inside one it is a
    no-op). Batch migrations rebuild a table by dropping it, which with enforcement on
    fails once other tables' rows refer to it."""
    connection.exec_driver_sql(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")
    connection.commit()


@contextmanager
def _one_sqlite_transaction(connection: Connection) -> Iterator[None]:
    """Run the block in one real SQLite transaction, DDL included (see the module)."""
    driver = connection.connection.driver_connection
    assert isinstance(driver, sqlite3.Connection)
    legacy = driver.isolation_level
    driver.isolation_level = None  # the driver begins and commits nothing by itself
    try:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            yield  # Alembic's transaction commits (or rolls back) this one as it ends
        finally:
            if driver.in_transaction:
                driver.rollback()
    finally:
        driver.isolation_level = legacy


with engine.connect() as connection, migration_lock(connection):
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        _foreign_keys(connection, on=False)
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=sqlite,
        compare_type=True,
        # Alembic assumes SQLite's DDL is not transactional and commits after each
        # migration; in the one transaction begun below it is.
        transactional_ddl=True,
    )
    with (
        _one_sqlite_transaction(connection) if sqlite else nullcontext(),
        context.begin_transaction(),
    ):
        context.run_migrations()
    if sqlite:
        broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
        _foreign_keys(connection, on=True)
        if broken:
            raise RuntimeError(f"a migration left rows that refer to nothing: {broken[:5]}")
