"""Alembic environment: corix passes its engine in; there is no alembic.ini."""

from __future__ import annotations

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


with engine.connect() as connection, migration_lock(connection):
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        _foreign_keys(connection, on=False)
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=sqlite,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
    if sqlite:
        broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
        _foreign_keys(connection, on=True)
        if broken:
            raise RuntimeError(f"a migration left rows that refer to nothing: {broken[:5]}")
