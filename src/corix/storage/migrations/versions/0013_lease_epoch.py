"""A run's lease gets an epoch: a fencing token that every takeover increments.

Writes made under a lease carry its epoch, and the database refuses those of an older one,
so a holder that was paused (SIGSTOP, a laptop lid, a stalled VM) and resumed after another
process took the run over cannot write again (see ``corix.storage.run_lease``). Stored runs
start at epoch 0.

Revision ID: lease_epoch
Revises: turn_messages
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "lease_epoch"
down_revision: str | None = "turn_messages"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("lease_epoch", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("lease_epoch")
