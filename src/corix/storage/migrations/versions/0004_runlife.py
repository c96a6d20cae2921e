"""Why a session failed: ``sessions.end_detail``

Revision ID: runlife
Revises: webseries
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "runlife"
down_revision: str | None = "webseries"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("end_detail", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("end_detail")
