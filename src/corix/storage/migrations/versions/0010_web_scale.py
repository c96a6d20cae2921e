"""The web testbed at scale: sign-in throttling shared by every server process; a series
owns its applications' names (two series may each have an "Assistant A").

Revision ID: web_scale
Revises: run_lease
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "web_scale"
down_revision: str | None = "run_lease"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "web_sign_in_throttle",
        sa.Column("subject", sa.String(320), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("first_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("subject"),
    )
    with op.batch_alter_table("applications") as batch:
        batch.drop_constraint("uq_application_name", type_="unique")
    op.create_index(
        "uq_application_name",
        "applications",
        ["name"],
        unique=True,
        sqlite_where=sa.text("evaluation_id IS NULL"),
        postgresql_where=sa.text("evaluation_id IS NULL"),
    )
    op.create_index(
        "uq_series_application_name",
        "applications",
        ["evaluation_id", "name"],
        unique=True,
        sqlite_where=sa.text("evaluation_id IS NOT NULL"),
        postgresql_where=sa.text("evaluation_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("uq_series_application_name", table_name="applications")
    op.drop_index("uq_application_name", table_name="applications")
    with op.batch_alter_table("applications") as batch:
        batch.create_unique_constraint("uq_application_name", ["name"])
    op.drop_table("web_sign_in_throttle")
