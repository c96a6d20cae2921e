"""web series: qualification draws, application lifecycle, designs, time on item

Revision ID: webseries
Revises: 0002
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "webseries"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "web_qualification_draws",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("test_version", sa.String(length=100), nullable=False),
        sa.Column("dialogue_ids", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["attempt_id"], ["web_qualification_attempts.id"], ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["web_users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        op.f("ix_web_qualification_draws_user_id"),
        "web_qualification_draws",
        ["user_id"],
        unique=False,
    )
    op.create_table(
        "web_application_status",
        sa.Column("application_id", sa.Integer(), nullable=False),
        sa.Column("check", sa.JSON(), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("replaced_by", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["application_id"], ["applications.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["replaced_by"], ["applications.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("application_id"),
    )
    with op.batch_alter_table("web_evaluation_settings") as batch:
        batch.add_column(
            sa.Column(
                "assignment_design",
                sa.String(length=32),
                nullable=False,
                server_default="counterbalanced",
            )
        )
        batch.add_column(
            sa.Column(
                "human_annotation", sa.String(length=32), nullable=False, server_default="all"
            )
        )
        batch.add_column(
            sa.Column("annotation_sample_size", sa.Integer(), nullable=False, server_default="0")
        )

    with op.batch_alter_table("web_annotation_tasks") as batch:
        batch.add_column(sa.Column("seconds_on_item", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("web_annotation_tasks") as batch:
        batch.drop_column("seconds_on_item")
    with op.batch_alter_table("web_evaluation_settings") as batch:
        batch.drop_column("annotation_sample_size")
        batch.drop_column("human_annotation")
        batch.drop_column("assignment_design")
    op.drop_table("web_application_status")
    op.drop_index(op.f("ix_web_qualification_draws_user_id"), table_name="web_qualification_draws")
    op.drop_table("web_qualification_draws")
