"""The scenario packs each run used, stored with the run and read back as records."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from corix.errors import CorixError
from corix.scenarios import PackRecord, ScenarioPack
from corix.storage.database import Database
from corix.storage.orm import RunPackRow

__all__ = ["add_run_packs", "run_pack", "run_packs", "store_run_packs"]


def add_run_packs(s: Session, run_id: str, records: Iterable[PackRecord]) -> None:
    """Add the records a run does not hold yet; a stored pack is never replaced, so a
    resumed run keeps the packs its first sessions were made with."""
    stored = set(s.scalars(select(RunPackRow.name).where(RunPackRow.run_id == run_id)))
    for record in records:
        if record.name not in stored:
            s.add(RunPackRow(run_id=run_id, **record.model_dump()))
            stored.add(record.name)


def store_run_packs(db: Database, run_id: str, records: Iterable[PackRecord]) -> None:
    with db.session() as s:
        add_run_packs(s, run_id, records)


def run_packs(db: Database, run_ids: Sequence[str]) -> dict[tuple[str, str], PackRecord]:
    """Every stored pack of ``run_ids``, keyed by (run, pack name)."""
    with db.session() as s:
        rows = s.scalars(
            select(RunPackRow)
            .where(RunPackRow.run_id.in_(list(run_ids)))
            .order_by(RunPackRow.run_id, RunPackRow.name)
        )
        return {(row.run_id, row.name): _record(row) for row in rows}


def run_pack(db: Database, run_id: str, name: str) -> ScenarioPack:
    """The pack ``name`` as run ``run_id`` used it."""
    with db.session() as s:
        row = s.get(RunPackRow, (run_id, name))
        record = None if row is None else _record(row)
    if record is None:
        raise CorixError(
            f"run '{run_id}' stores no scenario pack '{name}' (runs recorded before corix "
            "stored their packs cannot be annotated; run the plan again)"
        )
    return record.pack()


def _record(row: RunPackRow) -> PackRecord:
    return PackRecord(
        name=row.name,
        version=row.version,
        source=row.source,
        content_hash=row.content_hash,
        definition=row.definition,
    )
