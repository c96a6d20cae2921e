"""hit@k as export tables: ``hit_at_k`` (one row per annotator group × harm ×
application × level, beside the pooled rate) and ``hit_at_k_units`` (each persona
template's or prompt's attempts, defects and hit@k), written when the export is given a k.

The numbers are the measurement core's (:func:`corix.measurement.attack_rates`); they
need the whole record measured at once, unlike the streamed tables, so they are only
computed when asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path

from corix.measurement import HitRate
from corix.report._export_tables import CsvTables, Row
from corix.report.export_parquet import ColumnType, ParquetTables

__all__ = ["HIT_TABLES", "HIT_TYPES", "export_hit_tables", "hit_rows"]

_GROUP = ("annotators", "harm", "application", "level", "k", "unit")

HIT_TABLES: dict[str, tuple[str, ...]] = {
    "hit_at_k": (
        *_GROUP, "units", "too_few", "attempts", "defects", "hit_rate", "hit_low",
        "hit_high", "pooled_rate", "pooled_low", "pooled_high", "interval", "confidence",
    ),
    "hit_at_k_units": (*_GROUP, "attempt_unit", "n", "c", "hit_at_k"),
}  # fmt: skip
"""The hit@k tables and their columns, in the order they are written."""

_RATE: ColumnType = "float"
HIT_TYPES: dict[str, dict[str, ColumnType]] = {
    "hit_at_k": {
        "k": "int", "units": "int", "too_few": "int", "attempts": "int", "defects": "int",
        "hit_rate": _RATE, "hit_low": _RATE, "hit_high": _RATE, "pooled_rate": _RATE,
        "pooled_low": _RATE, "pooled_high": _RATE, "confidence": _RATE,
    },
    "hit_at_k_units": {"k": "int", "n": "int", "c": "int", "hit_at_k": _RATE},
}  # fmt: skip
"""The hit@k tables' typed columns (Parquet, hf)."""


def hit_rows(hits: Sequence[HitRate]) -> Iterator[tuple[str, Row]]:
    """``(table, row)`` for every group and every attempt unit of ``hits``."""
    for hit in hits:
        group: Row = {
            "annotators": hit.group.get("source") or hit.group.get("annotator") or "all",
            "harm": hit.group["harm"],
            "application": hit.group["application"],
            "level": hit.group["level"],
            "k": hit.k,
            "unit": hit.unit,
        }
        yield (
            "hit_at_k",
            {
                **group,
                **hit.model_dump(exclude={"group", "k", "unit", "per_unit"}),
            },
        )
        for unit in hit.per_unit:
            yield (
                "hit_at_k_units",
                {
                    **group,
                    "attempt_unit": unit.unit,
                    "n": unit.n,
                    "c": unit.c,
                    "hit_at_k": unit.hit_at_k,
                },
            )


def export_hit_tables(
    hits: Sequence[HitRate],
    out_dir: Path,
    *,
    as_csv: bool = True,
    parquet: bool = False,
    escape_formulas: bool = True,
) -> dict[str, int]:
    """Write the hit@k tables as CSV into ``out_dir`` and, when ``parquet``, as typed
    Parquet; return the rows written per table."""
    with ExitStack() as stack:
        writers: list[CsvTables | ParquetTables] = []
        if as_csv:
            writers.append(
                stack.enter_context(CsvTables(out_dir, HIT_TABLES, escape_formulas=escape_formulas))
            )
        if parquet:
            writers.append(stack.enter_context(ParquetTables(out_dir, HIT_TABLES, HIT_TYPES)))
        for table, row in hit_rows(hits):
            for writer in writers:
                writer.write(table, row)
    return writers[0].counts
