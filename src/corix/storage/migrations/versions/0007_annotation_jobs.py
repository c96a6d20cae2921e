"""Each annotation job's settings, stored with its run: ``annotation_jobs``

Revision ID: annotation_jobs
Revises: run_packs
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "annotation_jobs"
down_revision: str | None = "run_packs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "annotation_jobs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column(
            "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("annotator", sa.String(200), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_annotation_jobs_run", "annotation_jobs", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_annotation_jobs_run", table_name="annotation_jobs")
    op.drop_table("annotation_jobs")
