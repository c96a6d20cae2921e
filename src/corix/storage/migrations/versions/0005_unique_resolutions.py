"""One resolution per disputed answer: a unique index over session, category, question, turn

Revision ID: unique_resolutions
Revises: runlife
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "unique_resolutions"
down_revision: str | None = "runlife"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Concurrent resolutions once left duplicates: keep the latest of each answer first.
    op.execute(
        """
        DELETE FROM resolutions WHERE id NOT IN (
            SELECT MAX(id) FROM resolutions
            GROUP BY session_id, category, question_id, COALESCE(turn_index, -1)
        )
        """
    )
    op.create_index(
        "uq_resolution",
        "resolutions",
        ["session_id", "category", "question_id", sa.text("COALESCE(turn_index, -1)")],
        unique=True,
    )


def downgrade() -> None:
    op.drop_index("uq_resolution", table_name="resolutions")
