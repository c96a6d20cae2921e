"""`corix run`, `corix runs …`, `corix sessions show`, `corix export`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from corix.cli.common import DbOption, JsonOption, console, database, fail, print_json
from corix.execution.plan import Plan, load_plan
from corix.report.export import export_jsonl
from corix.report.transcripts import render_transcript
from corix.storage import Database, Repository
from corix.testing.runner import RunResult, execute_plan

runs_app = typer.Typer(help="List and inspect runs.", no_args_is_help=True)
sessions_app = typer.Typer(help="Inspect sessions.", no_args_is_help=True)


def run_with_progress(plan: Plan, db: Database, *, resume_run: str | None = None) -> RunResult:
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task("sessions", total=None)
        result = asyncio.run(
            execute_plan(
                plan,
                db,
                resume_run=resume_run,
                on_planned=lambda n: progress.update(task, total=n),
                on_session_done=lambda _item: progress.advance(task),
            )
        )
    print_summary(result)
    return result


def print_summary(result: RunResult) -> None:
    stats = result.stats
    table = Table(title=f"run {result.run_id}", show_header=False)
    for key in (
        "sessions",
        "failed_sessions",
        "turns",
        "error_turns",
        "model_calls",
        "retries",
        "failed_calls",
        "prompt_tokens",
        "completion_tokens",
        "simulator_prompt_tokens",
        "simulator_completion_tokens",
        "cost",
        "wall_s",
    ):
        if key in stats:
            table.add_row(key.replace("_", " "), str(stats[key]))
    if result.skipped or result.discarded:
        table.add_row("resumed: already complete", str(result.skipped))
        table.add_row("resumed: half-done, redone", str(result.discarded))
    console.print(table)
    if stats.get("failed_sessions"):
        console.print(
            f"[yellow]{stats['failed_sessions']} session(s) ended on an application error; "
            "their error turns are stored with the reason.[/]"
        )


def run_command(
    plan: Annotated[Path | None, typer.Argument(help="Plan YAML file.")] = None,
    resume: Annotated[
        str | None, typer.Option("--resume", help="Finish an interrupted run by its id.")
    ] = None,
    db: DbOption = None,
) -> None:
    """Execute a plan: applications × scenarios × levels, stored as they complete."""
    if (plan is None) == (resume is None):
        raise fail("give either a PLAN file or --resume RUN")
    loaded = load_plan(plan) if plan is not None else None
    with database(db) as database_:
        if loaded is not None:
            run_with_progress(loaded, database_)
        else:
            stored = Repository(database_).get_run(str(resume))
            run_with_progress(Plan.model_validate(stored.plan), database_, resume_run=stored.id)


@runs_app.command("list")
def runs_list(db: DbOption = None, as_json: JsonOption = False) -> None:
    """All runs, oldest first."""
    with database(db) as database_:
        rows = Repository(database_).list_runs()
    if as_json:
        print_json(
            [
                {
                    "id": r.id,
                    "name": r.name,
                    "status": r.status,
                    "created_at": r.created_at,
                    "summary": r.summary,
                }
                for r in rows
            ]
        )
        return
    table = Table()
    table.add_column("run", no_wrap=True)
    for column in ("name", "status", "sessions", "error turns", "created"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r.id,
            r.name,
            r.status,
            str(r.summary.get("sessions", "")),
            str(r.summary.get("error_turns", "")),
            f"{r.created_at:%Y-%m-%d %H:%M}",
        )
    console.print(table)


@runs_app.command("show")
def runs_show(
    run: Annotated[str, typer.Argument(help="Run id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A run's plan, status and counts."""
    with database(db) as database_:
        repo = Repository(database_)
        row = repo.get_run(run)
        counts = repo.run_counts(run)
    info = {
        "id": row.id,
        "name": row.name,
        "status": row.status,
        "seed": row.seed,
        "created_at": row.created_at,
        "finished_at": row.finished_at,
        "summary": row.summary,
        "stored": counts,
        "plan": row.plan,
    }
    if as_json:
        print_json(info)
        return
    console.print(f"[bold]{row.id}[/] {row.name} — {row.status}")
    console.print(f"stored: {counts}")
    console.print(f"summary: {row.summary}")


@sessions_app.command("show")
def sessions_show(
    session: Annotated[str, typer.Argument(help="Session id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A readable transcript of one session."""
    with database(db) as database_:
        repo = Repository(database_)
        record = repo.load_session(session)
        answers = repo.questionnaire(session)
    if as_json:
        print_json(
            {**record.model_dump(mode="json"), "questionnaire": [a.model_dump() for a in answers]}
        )
        return
    typer.echo(render_transcript(record, answers))


def export_command(
    run: Annotated[str, typer.Argument(help="Run id.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="Export format.")] = "jsonl",
    db: DbOption = None,
) -> None:
    """Export a run: one JSON line per session, with its turns and provenance."""
    if fmt != "jsonl":
        raise fail(f"unknown format '{fmt}'; known: jsonl")
    with database(db) as database_:
        repo = Repository(database_)
        repo.get_run(run)
        if output is None:
            for line in export_jsonl(repo, run):
                typer.echo(line)
            return
        with output.open("w", encoding="utf-8") as handle:
            count = 0
            for line in export_jsonl(repo, run):
                handle.write(line + "\n")
                count += 1
    console.print(f"wrote {count} sessions to {output}")
