"""Annotation claims: their time is a setting of the series, and a claim that ran out is
remembered.

``web_evaluation_settings.claim_minutes``: how long a claimed dialogue stays with its
annotator; NULL (every series stored so far) keeps the server's default.
``web_expired_claims``: a claim taken back into the queue, by its token, so an annotator who
comes back to it is recognised (re-claimed when the dialogue is still free, told plainly
otherwise) instead of meeting an unknown page.

Revision ID: series_claims
Revises: lease_epoch
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "series_claims"
down_revision: str | None = "lease_epoch"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("web_evaluation_settings") as batch:
        batch.add_column(sa.Column("claim_minutes", sa.Float(), nullable=True))
    op.create_table(
        "web_expired_claims",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("evaluation_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("category", sa.String(length=100), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["evaluation_id"], ["evaluations.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["web_users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token"),
    )


def downgrade() -> None:
    op.drop_table("web_expired_claims")
    with op.batch_alter_table("web_evaluation_settings") as batch:
        batch.drop_column("claim_minutes")
