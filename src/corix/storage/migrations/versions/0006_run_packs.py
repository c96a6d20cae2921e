"""The scenario packs a run used: ``run_packs``

Revision ID: run_packs
Revises: unique_resolutions
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "run_packs"
down_revision: str | None = "unique_resolutions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_packs",
        sa.Column(
            "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("version", sa.String(100), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "name"),
    )


def downgrade() -> None:
    op.drop_table("run_packs")
