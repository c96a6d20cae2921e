"""`corix export`: sessions as JSON lines, or tables of everything."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from corix.cli.common import (
    DbOption,
    console,
    database,
    fail,
)
from corix.cli.outputs import telling_what_was_left
from corix.cli.progress import progress_for

if TYPE_CHECKING:
    from corix.storage import Database


EXPORT_FORMATS = ("jsonl", "corix", "csv", "parquet", "hf")


SeriesOption = Annotated[
    str | None, typer.Option("--series", help="Export every run of this series.")
]
OutputOption = Annotated[
    Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")
]
FormatOption = Annotated[
    str,
    typer.Option(
        "--format",
        help="jsonl (one line per session), corix (the whole run in one versioned file that "
        "'corix import' reads back), csv (tables for spreadsheets), parquet (the CSV tables "
        "and typed Parquet) or hf (typed Parquet tables that Hugging Face datasets loads).",
    ),
]
FormulaEscapeOption = Annotated[
    bool,
    typer.Option(
        "--formula-escape/--no-formula-escape",
        help="CSV: prefix ' to cells a spreadsheet would evaluate (=, +, -, @); on by "
        "default, since replies are untrusted (Parquet, hf and JSON lines are never escaped).",
    ),
]
HitKOption = Annotated[
    int | None,
    typer.Option(
        "--hit-k",
        min=1,
        help="Tables only: also write hit_at_k and hit_at_k_units, the chance that one "
        "of k attempts of a persona template succeeds, per template and per group.",
    ),
]


def export_command(
    run: Annotated[str | None, typer.Argument(help="Run id (or --series NAME).")] = None,
    series: SeriesOption = None,
    output: OutputOption = None,
    fmt: FormatOption = "jsonl",
    escape_formulas: FormulaEscapeOption = True,
    hit_k: HitKOption = None,
    db: DbOption = None,
) -> None:
    """Export a run or a series: JSON lines of sessions with turns and provenance, or tables
    of sessions, turns, questionnaire answers, annotation passes, settled labels (with their
    measurement specification) and resolutions."""
    from corix.report import TableExport, write_table_export
    from corix.storage import get_run, series_runs

    if fmt not in EXPORT_FORMATS:
        raise fail(f"unknown format '{fmt}'; known: {', '.join(EXPORT_FORMATS)}")
    if (run is None) == (series is None):
        raise fail("give a run id or --series NAME (one of them)")
    if fmt == "corix" and run is None:
        raise fail("--format corix writes one run: give a run id, not --series")
    if fmt not in ("jsonl", "corix") and output is None:
        raise fail(f"--format {fmt} writes a folder of tables: give --output DIR")
    if fmt in ("jsonl", "corix") and hit_k is not None:
        raise fail("--hit-k writes tables: give --format csv, parquet or hf")
    with telling_what_was_left(output), database(db) as database_:
        if run is not None:
            get_run(database_, run)
        run_ids = [run] if run is not None else series_runs(database_, str(series))
        if not run_ids:
            raise fail(f"no evaluation series named '{series}' with runs")
        if fmt in ("jsonl", "corix"):
            _export_lines(database_, run_ids, output, run_file=fmt == "corix")
            return
        assert output is not None  # checked above
        request = TableExport(
            output=output,
            format="csv" if fmt == "csv" else "parquet" if fmt == "parquet" else "hf",
            escape_formulas=escape_formulas,
            hit_k=hit_k,
            title=f"series {series}" if series else f"run {run}",
        )
        with closing(progress_for("exporting sessions")) as tracker:
            counts = write_table_export(database_, run_ids, request, tracker)
    console.print(
        f"wrote {', '.join(f'{n} rows to {name}' for name, n in counts.items())} in {output}",
        soft_wrap=True,
    )


def _export_lines(db: Database, run_ids: list[str], output: Path | None, *, run_file: bool) -> None:
    """One JSON line per session (after the run's header, for a run file), to ``output``
    or standard output."""
    from corix.config import atomic_open
    from corix.report import export_jsonl, run_file_lines

    # On standard output the lines are the output: no progress among them.
    tracker = progress_for("exporting sessions", quiet=output is None)
    if run_file:
        lines = run_file_lines(db, run_ids[0], progress=tracker)
    else:
        lines = export_jsonl(db, *run_ids, progress=tracker)
    with closing(tracker):
        if output is None:
            for line in lines:
                typer.echo(line)
            return
        with atomic_open(output, encoding="utf-8", newline="\n") as handle:
            count = 0
            for line in lines:
                handle.write(line + "\n")
                count += 1
    what = f"run {run_ids[0]} ({count - 1} sessions)" if run_file else f"{count} sessions"
    console.print(f"wrote {what} to {output}", soft_wrap=True)
