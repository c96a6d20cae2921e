"""What each cell cost, by source: the simulated user's model calls per session and the
judge's per annotation pass, beside the application's (already on every turn).

Stored rows are filled in where the record tells: a session no model played the user of
(a script's, a person's) made no simulator calls; a simulated session stored before
these columns keeps NULL (not recorded), unless its user was the scripted engine. A
pass's calls and tokens come from the model-call details in its provenance, as new
passes' do.

Revision ID: cell_usage_sources
Revises: web_scale
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "cell_usage_sources"
down_revision: str | None = "web_scale"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SESSION_COLUMNS = ("simulator_calls", "simulator_prompt_tokens", "simulator_completion_tokens")
_PASS_COLUMNS = ("model_calls", "prompt_tokens", "completion_tokens")
_BATCH = 1000


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        for name in _SESSION_COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=True))
    with op.batch_alter_table("annotation_passes") as batch:
        for name in _PASS_COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=True))
    bind = op.get_bind()
    sessions = sa.table(
        "sessions",
        sa.column("id", sa.String),
        sa.column("source", sa.String),
        sa.column("provenance", sa.JSON),
        *(sa.column(name, sa.Integer) for name in _SESSION_COLUMNS),
    )
    none = dict.fromkeys(_SESSION_COLUMNS, 0)
    bind.execute(
        sessions.update().where(sessions.c.source.in_(["scripted", "human"])).values(**none)
    )
    scripted = [
        row.id
        for row in bind.execute(
            sa.select(sessions.c.id, sessions.c.provenance).where(sessions.c.source == "simulated")
        )
        if _json(row.provenance).get("engine") == "scripted"
    ]
    for start in range(0, len(scripted), _BATCH):
        chunk = scripted[start : start + _BATCH]
        bind.execute(sessions.update().where(sessions.c.id.in_(chunk)).values(**none))
    passes = sa.table(
        "annotation_passes",
        sa.column("id", sa.Integer),
        sa.column("annotator_kind", sa.String),
        sa.column("provenance", sa.JSON),
        *(sa.column(name, sa.Integer) for name in _PASS_COLUMNS),
    )
    fill = (
        passes.update()
        .where(passes.c.id == sa.bindparam("pass_id"))
        .values({name: sa.bindparam(name) for name in _PASS_COLUMNS})
    )
    last = 0
    while True:  # a page of passes at a time: a large database is not read at once
        rows = bind.execute(
            sa.select(passes.c.id, passes.c.annotator_kind, passes.c.provenance)
            .where(passes.c.id > last)
            .order_by(passes.c.id)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        values = [{"pass_id": r.id, **_pass_usage(r.annotator_kind, r.provenance)} for r in rows]
        bind.execute(fill, values)
        last = rows[-1].id


def downgrade() -> None:
    with op.batch_alter_table("annotation_passes") as batch:
        for name in reversed(_PASS_COLUMNS):
            batch.drop_column(name)
    with op.batch_alter_table("sessions") as batch:
        for name in reversed(_SESSION_COLUMNS):
            batch.drop_column(name)


def _json(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pass_usage(kind: str, provenance: Any) -> dict[str, int | None]:
    """As ``corix.storage.store_records.pass_usage_columns`` computed it when this was written
    (a migration keeps its own copy: later code may change)."""
    details = _json(provenance).get("details")
    if not isinstance(details, dict):
        return dict.fromkeys(_PASS_COLUMNS, None if kind == "llm" else 0)
    if details.get("cached"):
        return dict.fromkeys(_PASS_COLUMNS, 0)
    return {
        "model_calls": int(details.get("attempts") or 0),
        "prompt_tokens": int(details.get("prompt_tokens") or 0),
        "completion_tokens": int(details.get("completion_tokens") or 0),
    }
