"""The settings each report was written with, stored with its runs: ``written_reports``

Revision ID: written_reports
Revises: annotation_jobs
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "written_reports"
down_revision: str | None = "annotation_jobs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "written_reports",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("report_id", sa.String(32), nullable=False),
        sa.Column(
            "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_written_reports_run", "written_reports", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_written_reports_run", table_name="written_reports")
    op.drop_table("written_reports")
