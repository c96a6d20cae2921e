"""The settings each annotation job of a run started with, stored and read as records."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from corix.domain import AnnotationJobSettings
from corix.storage.database import Database
from corix.storage.orm import AnnotationJobRow
from corix.storage.store_records import AnnotationJobRecord

__all__ = ["annotation_jobs", "record_annotation_job"]


def record_annotation_job(db: Database, run_id: str, settings: AnnotationJobSettings) -> None:
    """Store a job's settings as it starts; every invocation adds one, resumed or not."""
    with db.session() as s:
        s.add(
            AnnotationJobRow(
                run_id=run_id,
                annotator=settings.stored_as,
                settings=settings.model_dump(mode="json"),
            )
        )


def annotation_jobs(db: Database, run_ids: Sequence[str]) -> list[AnnotationJobRecord]:
    """The annotation jobs of ``run_ids``, in the order they started."""
    with db.session() as s:
        rows = s.scalars(
            select(AnnotationJobRow)
            .where(AnnotationJobRow.run_id.in_(list(run_ids)))
            .order_by(AnnotationJobRow.id)
        )
        return [
            AnnotationJobRecord(
                run_id=row.run_id,
                started_at=row.started_at,
                settings=AnnotationJobSettings.model_validate(row.settings),
            )
            for row in rows
        ]
