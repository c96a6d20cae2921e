"""`corix export`: sessions as JSON lines, or tables of everything."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from corix.cli.common import (
    DbOption,
    console,
    database,
    fail,
)
from corix.cli.progress import progress_for

if TYPE_CHECKING:
    pass


EXPORT_FORMATS = ("jsonl", "csv", "parquet", "hf")


def export_command(
    run: Annotated[str | None, typer.Argument(help="Run id (or --series NAME).")] = None,
    series: Annotated[
        str | None, typer.Option("--series", help="Export every run of this series.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="jsonl (one line per session), csv, parquet or hf (a folder of tables; hf "
            "loads with Hugging Face datasets).",
        ),
    ] = "jsonl",
    escape_formulas: Annotated[
        bool,
        typer.Option(
            "--formula-escape/--no-formula-escape",
            help="CSV: prefix ' to cells a spreadsheet would evaluate (=, +, -, @); on by "
            "default, since replies are untrusted.",
        ),
    ] = True,
    hit_k: Annotated[
        int | None,
        typer.Option(
            "--hit-k",
            min=1,
            help="Tables only: also write hit_at_k and hit_at_k_units, the chance that one "
            "of k attempts of a persona template succeeds, per template and per group.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Export a run or a series: JSON lines of sessions with turns and provenance, or tables
    of sessions, turns, questionnaire answers, annotation passes, settled labels (with their
    measurement specification) and resolutions."""
    from corix.measurement import attack_rates, measure, measure_in_chunks
    from corix.report import (
        HIT_TABLES,
        TABLES,
        export_hit_tables,
        export_jsonl,
        export_tables,
        write_dataset_card,
    )
    from corix.storage import Repository, series_runs

    if fmt not in EXPORT_FORMATS:
        raise fail(f"unknown format '{fmt}'; known: {', '.join(EXPORT_FORMATS)}")
    if (run is None) == (series is None):
        raise fail("give a run id or --series NAME (one of them)")
    if fmt != "jsonl" and output is None:
        raise fail(f"--format {fmt} writes a folder of tables: give --output DIR")
    if fmt == "jsonl" and hit_k is not None:
        raise fail("--hit-k writes tables: give --format csv, parquet or hf")
    with database(db) as database_:
        repo = Repository(database_)
        if run is not None:
            repo.get_run(run)
        run_ids = [run] if run is not None else series_runs(database_, str(series))
        if not run_ids:
            raise fail(f"no evaluation series named '{series}' with runs")
        if fmt != "jsonl":
            assert output is not None  # checked above
            measurement = measure_in_chunks(database_, run_ids)
            tracker = progress_for(console, "exporting sessions")
            try:
                counts = export_tables(
                    repo,
                    measurement,
                    output,
                    parquet=fmt == "parquet",
                    escape_formulas=escape_formulas,
                    progress=tracker,
                )
            finally:
                tracker.close()
            if hit_k is not None:
                hits = attack_rates(database_, measure(database_, run_ids), k=hit_k)
                counts |= export_hit_tables(
                    hits, output, parquet=fmt == "parquet", escape_formulas=escape_formulas
                )
            if fmt == "hf":
                what = f"series {series}" if series else f"run {run}"
                tables = {**TABLES, **HIT_TABLES} if hit_k is not None else TABLES
                write_dataset_card(
                    output, tables, counts, f"# corix export of {what}\n", default="sessions"
                )
            console.print(
                f"wrote {', '.join(f'{n} rows to {name}' for name, n in counts.items())} "
                f"in {output}",
                soft_wrap=True,
            )
            return
        # On standard output the lines are the output: no progress among them.
        tracker = progress_for(console, "exporting sessions", quiet=output is None)
        lines = export_jsonl(repo, *run_ids, progress=tracker)
        try:
            if output is None:
                for line in lines:
                    typer.echo(line)
                return
            with output.open("w", encoding="utf-8") as handle:
                count = 0
                for line in lines:
                    handle.write(line + "\n")
                    count += 1
        finally:
            tracker.close()
    console.print(f"wrote {count} sessions to {output}")
