"""What the web writes (a series, an account, a senior's resolution), written through the
web's stores for the tests outside the web: they see a database the testbed could leave."""

from __future__ import annotations

from collections.abc import Sequence

from corix.storage import Database, StoredValue
from corix.storage.web import accounts, passes, series, transaction


def new_series(db: Database, name: str, levels: Sequence[str] = ("model_testing",)) -> str:
    """A series named ``name`` made as the web makes one, with its run of human sessions
    (``human-<id>``, empty here); its id."""
    return series.create_series(
        db,
        slug=name,
        name=name,
        description="",
        scenarios=["tv_spoilers"],
        levels=list(levels),
        passes_per_item=1,
        review_rate=0.0,
        max_turns=10,
        human_run_id=lambda evaluation: f"human-{evaluation}",
        human_run_name=f"{name} (human sessions)",
        packs=[],
    )


def series_of(db: Database, name: str, run_names: Sequence[str]) -> str:
    """A series named ``name`` holding the runs named ``run_names``; the id of its run of
    human sessions."""
    evaluation_id = new_series(db, name)
    for run_name in run_names:
        series.link_run(db, run_name, evaluation_id)
    return f"human-{evaluation_id}"


def add_user(db: Database, username: str, role: str) -> int:
    """A web account's id."""
    with transaction(db) as tx:
        return accounts.add_user(tx, username, "not a hash", role).id


def resolve(
    db: Database,
    session_id: str,
    category: str,
    question_id: str,
    status: str,
    value: StoredValue | None = None,
) -> None:
    """A senior's resolution of a dialogue-level answer, as the web stores it."""
    found = accounts.user_for_sign_in(db, "senior")
    senior = found[0].id if found is not None else add_user(db, "senior", "senior_annotator")
    resolution = passes.NewResolution(question_id, None, status, value, None, senior)
    with transaction(db) as tx:
        passes.replace_resolutions(tx, session_id, category, [resolution])
