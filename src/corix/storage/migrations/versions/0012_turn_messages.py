"""Turns keep every message: a tool-using application's tool calls and results, system
and developer messages, content parts (``turns.messages``, JSON).

Stored turns are plain (a user's text and a reply) and stay as they are: NULL means the
turn's two texts are the whole of it.

Revision ID: turn_messages
Revises: cell_usage_sources
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "turn_messages"
down_revision: str | None = "cell_usage_sources"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.add_column(sa.Column("messages", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("messages")
