"""`corix export --format csv|parquet|hf`: every table of some runs, written by one call
from a typed request."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from corix.measurement import attack_rates, measure, measure_in_chunks
from corix.report._export_tables import TABLES, export_tables
from corix.report.dataset_card import write_dataset_card
from corix.report.export_hits import HIT_TABLES, export_hit_tables
from corix.report.progress import UNWATCHED, Progress
from corix.storage import Database


class TableExport(BaseModel):
    """Where the tables go, in which format, and what the export is of."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    output: Path
    """The folder written."""
    format: Literal["csv", "parquet", "hf"]
    """csv: tables for spreadsheets; parquet: the same CSV and typed Parquet beside it;
    hf: typed Parquet tables with a dataset card that Hugging Face datasets loads."""
    escape_formulas: bool = True
    """CSV: prefix ' to cells a spreadsheet would evaluate (never Parquet's cells)."""
    hit_k: int | None = Field(default=None, ge=1)
    """Also the hit@k tables of this k."""
    title: str
    """What the export is of, e.g. "run r1" (the dataset card's heading)."""


def write_table_export(
    db: Database, run_ids: Sequence[str], request: TableExport, progress: Progress = UNWATCHED
) -> dict[str, int]:
    """Write the tables of ``run_ids`` as ``request`` says; the rows written per table.

    ``progress`` counts the sessions exported.
    """
    as_csv = request.format != "hf"
    parquet = request.format != "csv"
    counts = export_tables(
        db,
        measure_in_chunks(db, run_ids),
        request.output,
        as_csv=as_csv,
        parquet=parquet,
        escape_formulas=request.escape_formulas,
        progress=progress,
    )
    if request.hit_k is not None:
        hits = attack_rates(db, measure(db, run_ids), k=request.hit_k)
        counts |= export_hit_tables(
            hits,
            request.output,
            as_csv=as_csv,
            parquet=parquet,
            escape_formulas=request.escape_formulas,
        )
    if request.format == "hf":
        tables = {**TABLES, **HIT_TABLES} if request.hit_k is not None else TABLES
        heading = f"# corix export of {request.title}\n"
        write_dataset_card(
            request.output, tables, counts, heading, default="sessions", file_format="parquet"
        )
    return counts
