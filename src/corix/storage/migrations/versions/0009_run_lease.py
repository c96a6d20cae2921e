"""A run's lease: which process holds it and when that process last said it is alive.

Revision ID: run_lease
Revises: written_reports
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "run_lease"
down_revision: str | None = "written_reports"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("lease_holder", sa.String(300), nullable=True))
        batch.add_column(sa.Column("lease_heartbeat_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("lease_heartbeat_at")
        batch.drop_column("lease_holder")
