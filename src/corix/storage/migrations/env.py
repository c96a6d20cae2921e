"""Alembic environment: corix passes its engine in; there is no alembic.ini."""

from __future__ import annotations

from alembic import context

from corix.storage.orm import Base

config = context.config
engine = config.attributes["engine"]

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
