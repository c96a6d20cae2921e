"""The web testbed at scale: sign-in throttling shared by every server process.

Revision ID: i23_web_scale
Revises: written_reports
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "i23_web_scale"
down_revision: str | None = "written_reports"
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


def downgrade() -> None:
    op.drop_table("web_sign_in_throttle")
