"""`corix run`, `corix runs …`, `corix sessions show`, `corix export`."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import time
from pathlib import Path
from typing import Annotated

import typer
import yaml
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from corix.cli.common import (
    DbOption,
    DbPoolOption,
    ExecutorOption,
    JsonOption,
    RayAddressOption,
    RayWorkersOption,
    console,
    database,
    fail,
    print_error,
    print_json,
    wrapping_table,
)
from corix.cli.exit_codes import ExitCode
from corix.execution import (
    ExecutorSettings,
    Plan,
    PlanFile,
    PreflightError,
    RunResult,
    RunStatus,
    build_executor,
    execute_plan,
    load_plan_file,
    preflight,
)
from corix.measurement import compare_rates, compare_trees, measure, measure_in_chunks
from corix.report import (
    TABLES,
    annotator_label,
    endpoint_text,
    export_jsonl,
    export_tables,
    render_transcript,
    repeats_text,
    settings_text,
    targets_text,
    write_dataset_card,
)
from corix.storage import (
    AnnotationJobRecord,
    Database,
    Repository,
    WrittenReportRecord,
    annotation_jobs,
    delete_run,
    series_runs,
    set_run_status_if,
    written_reports,
)

EXPORT_FORMATS = ("jsonl", "csv", "parquet", "hf")

runs_app = typer.Typer(help="List and inspect runs.", no_args_is_help=True)
sessions_app = typer.Typer(help="Inspect sessions.", no_args_is_help=True)


class LineProgress:
    """Progress as plain log lines, for output that is not a terminal (CI logs, files):
    one line when the work is counted, then one per tenth of it done."""

    def __init__(self) -> None:
        self._total = 0
        self._done = 0
        self._started = time.monotonic()

    def planned(self, total: int) -> None:
        self._total = total
        self._started = time.monotonic()
        console.print(f"sessions: {total} to run", soft_wrap=True)

    def advance(self) -> None:
        self._done += 1
        if self._total and self._done * 10 // self._total > (self._done - 1) * 10 // self._total:
            elapsed = time.monotonic() - self._started
            console.print(
                f"sessions: {self._done}/{self._total} done after {elapsed:.0f} s", soft_wrap=True
            )

    def close(self) -> None:
        """Nothing to tidy: every line is already written."""


class BarProgress:
    """A progress bar on a terminal, shown once preflight passed and the work is counted."""

    def __init__(self) -> None:
        self._progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self._task = self._progress.add_task("sessions", start=False)

    def planned(self, total: int) -> None:
        self._progress.update(self._task, total=total)
        self._progress.start_task(self._task)
        self._progress.start()

    def advance(self) -> None:
        self._progress.advance(self._task)

    def close(self) -> None:
        if self._progress.live.is_started:
            self._progress.stop()


def run_with_progress(
    plan: Plan | PlanFile,
    db: Database,
    *,
    resume_run: str | None = None,
    executor: ExecutorSettings | None = None,
) -> RunResult:
    """Run with a progress bar, or plain progress lines when not on a terminal."""
    tracker = BarProgress() if console.is_terminal else LineProgress()
    try:
        result = asyncio.run(
            execute_plan(
                plan,
                db,
                resume_run=resume_run,
                on_planned=tracker.planned,
                on_session_done=lambda _item: tracker.advance(),
                handle_signals=True,
                executor=build_executor(executor or ExecutorSettings()),
            )
        )
    finally:
        tracker.close()
    print_summary(result)
    return result


def print_summary(result: RunResult) -> None:
    stats = result.stats
    table = Table(title=f"run {result.run_id}: {result.status}", show_header=False)
    for key in (
        "sessions",
        "failed_sessions",
        "turns",
        "error_turns",
        "model_calls",
        "retries",
        "waited_s",
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
    if result.error is not None:
        print_error(f"run {result.run_id} failed: {result.error}")
    if stats.get("failed_sessions"):
        console.print(
            f"[yellow]{stats['failed_sessions']} session(s) ended on an application or "
            "simulator error or lost a record to the database; each stores its reason "
            "(`corix sessions show`).[/]"
        )
    if stats.get("missing_sessions"):
        console.print(
            f"[yellow]{stats['missing_sessions']} session(s) were refused by the database; "
            f"`corix run --resume {result.run_id}` redoes them.[/]"
        )
    for refusal in stats.get("refused_records", [])[:5]:
        print_error(f"the database refused {refusal}")
    if result.status is RunStatus.INTERRUPTED:
        console.print(f"interrupted: `corix run --resume {result.run_id}` finishes it")


def run_exit_code(status: RunStatus, *, allow_failures: bool) -> ExitCode:
    """The documented exit code of a run that ended with ``status``."""
    if status is RunStatus.COMPLETE_WITH_FAILURES:
        return ExitCode.OK if allow_failures else ExitCode.FAILURES
    return {
        RunStatus.COMPLETE: ExitCode.OK,
        RunStatus.FAILED: ExitCode.FAILED,
        RunStatus.CANCELLED: ExitCode.CANCELLED,
    }.get(status, ExitCode.INTERRUPTED)


def run_command(
    plan: Annotated[Path | None, typer.Argument(help="Plan YAML file.")] = None,
    resume: Annotated[
        str | None, typer.Option("--resume", help="Finish an interrupted run by its id.")
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Only check the plan (specs, options, variables, packs, endpoints)."
        ),
    ] = False,
    allow_failures: Annotated[
        bool,
        typer.Option(
            "--allow-failures", help="Exit 0 even when some sessions failed (not when all did)."
        ),
    ] = False,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            help="SQLite file caching model replies (applications and simulated users) "
            "across runs; overrides the plan's cache.",
        ),
    ] = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    ray_workers: RayWorkersOption = None,
    db_pool: DbPoolOption = None,
    db: DbOption = None,
) -> None:
    """Execute a plan: applications × scenarios × levels, stored as they complete."""
    settings = executor_settings(executor, ray_address, ray_workers, db_pool)
    if (plan is None) == (resume is None):
        raise fail("give either a PLAN file or --resume RUN")
    if check and plan is None:
        raise fail("--check needs a PLAN file")
    if cache is not None and resume is not None:
        raise fail("--resume uses the run's own cache; --cache goes with a PLAN file")
    source = load_plan_file(plan) if plan is not None else None
    if source is not None and cache is not None:
        cached = source.plan.model_copy(update={"cache": str(cache.resolve())})
        source = dataclasses.replace(source, plan=cached)
    try:
        if check and source is not None:
            checked = asyncio.run(preflight(source))
            console.print(
                f"plan '{checked.plan.name}' is ready: {checked.planned} sessions over "
                f"{len(checked.plan.applications)} application(s) and "
                f"{len(checked.packs)} scenario(s)"
            )
            return
        with database(db) as database_:
            if source is not None:
                _refuse_cache_on_ray(settings, source.plan)
                result = run_with_progress(source, database_, executor=settings)
            else:
                stored = Repository(database_).get_run(str(resume))
                stored_plan = Plan.model_validate(stored.plan)
                _refuse_cache_on_ray(settings, stored_plan)
                result = run_with_progress(
                    PlanFile(stored_plan),
                    database_,
                    resume_run=stored.id,
                    executor=settings,
                )
    except PreflightError as exc:
        for problem in exc.problems:
            print_error(str(problem))
        raise typer.Exit(ExitCode.USAGE) from None
    code = run_exit_code(result.status, allow_failures=allow_failures)
    if code is not ExitCode.OK:
        raise typer.Exit(code)


def _refuse_cache_on_ray(settings: ExecutorSettings, plan: Plan) -> None:
    # Ray workers open their own applications; a cache file on this machine is not theirs.
    if settings.kind == "ray" and plan.cache:
        raise fail("a response cache is a file on this machine; --executor ray runs without one")


def executor_settings(
    kind: str, ray_address: str | None, ray_workers: int | None, db_pool: int | None = None
) -> ExecutorSettings:
    """The executor asked for on the command line; a usage error when it cannot run."""
    if kind not in ("local", "ray"):
        raise fail(f"unknown executor '{kind}'; known: local, ray")
    if kind == "local" and (ray_address, ray_workers, db_pool) != (None, None, None):
        raise fail("--ray-address, --ray-workers and --db-pool need --executor ray")
    if kind == "ray" and importlib.util.find_spec("ray") is None:
        raise fail("--executor ray needs Ray: pip install 'corix[ray]'")
    return ExecutorSettings.model_validate(
        {"kind": kind, "ray_address": ray_address, "ray_workers": ray_workers, "db_pool": db_pool}
    )


@runs_app.command("cancel")
def runs_cancel(
    run: Annotated[str, typer.Argument(help="Run id.")],
    db: DbOption = None,
) -> None:
    """Stop a run for good: a running one stops within seconds and is never resumed."""
    stoppable = {
        RunStatus.RUNNING,
        RunStatus.INTERRUPTED,
        RunStatus.FAILED,
    }
    with database(db) as database_:
        previous = set_run_status_if(
            database_, run, RunStatus.CANCELLED, allowed={status.value for status in stoppable}
        )
    if previous not in stoppable:
        raise fail(
            f"run '{run}' is {previous}: only a running, interrupted or failed run can be cancelled"
        )
    console.print(f"run {run} cancelled (was {previous}); its stored sessions are kept")


@runs_app.command("delete")
def runs_delete(
    run: Annotated[str, typer.Argument(help="Run id.")],
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    db: DbOption = None,
) -> None:
    """Delete a run with its sessions and annotations (not one that is running)."""
    with database(db) as database_:
        row = Repository(database_).get_run(run)
        if row.status == RunStatus.RUNNING:
            raise fail(f"run '{run}' is running: `corix runs cancel {run}` first")
        if row.evaluation_id is not None:
            raise fail(
                f"run '{run}' belongs to web evaluation '{row.evaluation_id}'; "
                "it is managed in the web app"
            )
        if not yes and not typer.confirm(f"delete run {run} and everything stored for it?"):
            raise typer.Exit(ExitCode.USAGE)
        sessions = delete_run(database_, run)
    console.print(f"deleted run {run} and its {sessions} session(s)")


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
    table = wrapping_table("run", "name", "status", "sessions", "error turns", "created")
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


@runs_app.command("compare")
def runs_compare(
    first: Annotated[str, typer.Argument(help="The earlier run.")],
    second: Annotated[str, typer.Argument(help="The later run.")],
    tree: Annotated[str, typer.Option("--tree", help="Tree whose dimensions to compare.")] = (
        "aria_pilot"
    ),
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Two runs side by side: rates and CoRIx dimensions, the change, and whether the
    intervals overlap (both measured under the same default specification)."""
    with database(db) as database_:
        repo = Repository(database_)
        repo.get_run(first)
        repo.get_run(second)
        a, b = measure(database_, [first]), measure(database_, [second])
        rows = [
            *compare_rates(a, b, ("harm", "application")),
            *compare_trees(database_, a, b, tree),
        ]
    if as_json:
        print_json(
            [
                {
                    "what": row.what,
                    "a": row.a,
                    "a_interval": list(row.a_interval),
                    "b": row.b,
                    "b_interval": list(row.b_interval),
                    "change": row.change,
                    "intervals_overlap": row.overlap,
                }
                for row in rows
            ]
        )
        return
    table = wrapping_table("what", first, second, "change", "intervals overlap")
    for row in rows:
        overlap = {None: "—", True: "yes", False: "no"}[row.overlap]
        table.add_row(Text(row.what), _value(row.a), _value(row.b), _value(row.change), overlap)
    console.print(table)


def _value(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


@runs_app.command("show")
def runs_show(
    run: Annotated[str, typer.Argument(help="Run id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A run's plan, status and counts, its annotation jobs and the reports written of it."""
    with database(db) as database_:
        repo = Repository(database_)
        row = repo.get_run(run)
        counts = repo.run_counts(run)
        jobs = annotation_jobs(database_, [run])
        reports = written_reports(database_, [run])
    info = {
        "id": row.id,
        "name": row.name,
        "status": row.status,
        "seed": row.seed,
        "created_at": row.created_at,
        "finished_at": row.finished_at,
        "summary": row.summary,
        "stored": counts,
        "annotation_jobs": [
            {"started_at": job.started_at, **job.settings.model_dump(mode="json")} for job in jobs
        ],
        "reports": [
            {"report_id": report.report_id, "digest": report.digest}
            | report.settings.model_dump(mode="json")
            for report in reports
        ],
        "plan": row.plan,
    }
    if as_json:
        print_json(info)
        return
    console.print(f"[bold]{row.id}[/] {row.name} — {row.status}", soft_wrap=True)
    console.print("stored: " + ", ".join(f"{k} {v}" for k, v in counts.items()), markup=False)
    summary = {k: v for k, v in row.summary.items() if k != "invocations"}
    console.print("summary: " + ", ".join(f"{k} {v}" for k, v in summary.items()), markup=False)
    _print_annotation_jobs(jobs)
    _print_reports(reports)
    console.print("plan:", markup=False)
    console.print(yaml.safe_dump(row.plan, sort_keys=False, allow_unicode=True), markup=False)


def _print_annotation_jobs(jobs: list[AnnotationJobRecord]) -> None:
    if not jobs:
        console.print("annotation jobs: none", markup=False)
        return
    console.print("annotation jobs:", markup=False)
    for job in jobs:
        settings = job.settings
        started = job.started_at.strftime("%Y-%m-%d %H:%M:%S")
        console.print(
            f"  {started} {annotator_label(settings.stored_as)} ({settings.annotator})\n"
            f"    asked: {repeats_text(settings)}\n"
            f"    targets: {targets_text(settings)}\n"
            f"    endpoint: {endpoint_text(settings)}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _print_reports(reports: list[WrittenReportRecord]) -> None:
    if not reports:
        console.print("reports: none", markup=False)
        return
    console.print("reports:", markup=False)
    for report in reports:
        settings = report.settings
        written = settings.written_at.strftime("%Y-%m-%d %H:%M:%S")
        series = f" of series {settings.series}" if settings.series is not None else ""
        measurement = settings.measurement_digest
        if settings.measurement_source is not None:
            measurement += f" from {settings.measurement_source}"
        console.print(
            f"  {written} report settings {report.digest}{series} (corix "
            f"{settings.corix_version})\n"
            f"    settings: {settings_text(settings)}\n"
            f"    measurement: {measurement}\n"
            f"    written to: {', '.join(output.path for output in settings.outputs)}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


@sessions_app.command("list")
def sessions_list(
    run: Annotated[str, typer.Argument(help="Run id.")],
    application: Annotated[str | None, typer.Option(help="Only this application.")] = None,
    scenario: Annotated[str | None, typer.Option(help="Only this scenario.")] = None,
    level: Annotated[str | None, typer.Option(help="Only this level.")] = None,
    failed: Annotated[
        bool, typer.Option("--failed", help="Only dialogues the application never answered.")
    ] = False,
    violation: Annotated[
        bool, typer.Option("--violation", help="Only dialogues some annotator source flags.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A run's sessions, filtered; violations are the measurement core's settled verdicts."""
    with database(db) as database_:
        Repository(database_).get_run(run)
        measurement = measure(database_, [run])
    flagged = measurement.dialogue_verdicts()
    chosen = [
        (dialogue, flagged.get(dialogue.session_id, {}))
        for dialogue in measurement.dialogues
        if (application is None or dialogue.application == application)
        and (scenario is None or dialogue.scenario == scenario)
        and (level is None or dialogue.level == level)
        and (not failed or dialogue.not_measurable is not None)
        and (not violation or any(v > 0 for v in flagged.get(dialogue.session_id, {}).values()))
    ]
    if as_json:
        print_json(
            [
                {
                    "session": dialogue.session_id,
                    "application": dialogue.application,
                    "scenario": dialogue.scenario,
                    "level": dialogue.level,
                    "not_measurable": dialogue.not_measurable,
                    "violation": by_source,
                }
                for dialogue, by_source in chosen
            ]
        )
        return
    table = wrapping_table(
        "session", "application", "scenario", "level", "violation", "not measurable"
    )
    for dialogue, by_source in chosen:
        verdicts = ", ".join(f"{s} {v:g}" for s, v in sorted(by_source.items()))
        table.add_row(
            Text(dialogue.session_id),
            Text(dialogue.application),
            Text(dialogue.scenario),
            Text(dialogue.level),
            Text(verdicts or "—"),
            Text(dialogue.not_measurable or ""),
        )
    console.print(table)
    console.print(f"{len(chosen)} of {len(measurement.dialogues)} sessions")


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
    db: DbOption = None,
) -> None:
    """Export a run or a series: JSON lines of sessions with turns and provenance, or tables
    of sessions, turns, questionnaire answers, annotation passes, settled labels (with their
    measurement specification) and resolutions."""
    if fmt not in EXPORT_FORMATS:
        raise fail(f"unknown format '{fmt}'; known: {', '.join(EXPORT_FORMATS)}")
    if (run is None) == (series is None):
        raise fail("give a run id or --series NAME (one of them)")
    if fmt != "jsonl" and output is None:
        raise fail(f"--format {fmt} writes a folder of tables: give --output DIR")
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
            counts = export_tables(repo, measurement, output, parquet=fmt == "parquet")
            if fmt == "hf":
                what = f"series {series}" if series else f"run {run}"
                write_dataset_card(
                    output, TABLES, counts, f"# corix export of {what}\n", default="sessions"
                )
            console.print(
                f"wrote {', '.join(f'{n} rows to {name}' for name, n in counts.items())} "
                f"in {output}",
                soft_wrap=True,
            )
            return
        lines = (line for run_id in run_ids for line in export_jsonl(repo, run_id))
        if output is None:
            for line in lines:
                typer.echo(line)
            return
        with output.open("w", encoding="utf-8") as handle:
            count = 0
            for line in lines:
                handle.write(line + "\n")
                count += 1
    console.print(f"wrote {count} sessions to {output}")
