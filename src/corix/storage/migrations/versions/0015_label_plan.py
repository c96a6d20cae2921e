"""A series' label plan: the dialogues people should label next (``corix plan labels``).

When a series' human annotation selection is ``plan``, its annotation queue offers these
dialogues and no others.

Revision ID: label_plan
Revises: series_claims
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "label_plan"
down_revision: str | None = "series_claims"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "web_label_plan",
        sa.Column(
            "evaluation_id",
            sa.String(64),
            sa.ForeignKey("evaluations.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "session_id",
            sa.String(64),
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("evaluation_id", "session_id"),
    )


def downgrade() -> None:
    op.drop_table("web_label_plan")
