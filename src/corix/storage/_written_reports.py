"""The settings each report was written with, stored with every run it covers."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select

from corix.domain import WrittenReportSettings
from corix.storage.database import Database
from corix.storage.orm import WrittenReportRow
from corix.storage.store_records import WrittenReportRecord

__all__ = ["record_written_report", "written_reports"]


def record_written_report(db: Database, settings: WrittenReportSettings) -> str:
    """Store a written report's settings with each of its runs, in one transaction;
    returns the id the rows share."""
    report_id = uuid.uuid4().hex
    stored = settings.model_dump(mode="json")
    with db.session() as s:
        s.add_all(
            WrittenReportRow(
                report_id=report_id,
                run_id=run_id,
                written_at=settings.written_at,
                digest=settings.digest,
                settings=stored,
            )
            for run_id in dict.fromkeys(settings.runs)
        )
    return report_id


def written_reports(db: Database, run_ids: Sequence[str]) -> list[WrittenReportRecord]:
    """The reports written of ``run_ids``, oldest first (a series report once per run)."""
    with db.session() as s:
        rows = s.scalars(
            select(WrittenReportRow)
            .where(WrittenReportRow.run_id.in_(list(run_ids)))
            .order_by(WrittenReportRow.id)
        )
        return [
            WrittenReportRecord(
                report_id=row.report_id,
                run_id=row.run_id,
                digest=row.digest,
                settings=WrittenReportSettings.model_validate(row.settings),
            )
            for row in rows
        ]
