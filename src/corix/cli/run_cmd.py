"""`corix run`: execute a plan, or resume a stopped run."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from corix.cli.common import (
    DbOption,
    DbPoolOption,
    ExecutorOption,
    RayAddressOption,
    RayWorkersOption,
    console,
    database,
    fail,
    print_error,
)
from corix.cli.exit_codes import ExitCode
from corix.cli.progress import progress_for
from corix.cli.sequential_cmd import run_sequential

if TYPE_CHECKING:
    from corix.domain import Plan, PlanFile, RunSummary
    from corix.execution import ExecutorSettings, RunRequest, RunResult, RunStatus
    from corix.storage import Database


def run_with_progress(
    plan: Plan | PlanFile,
    db: Database,
    *,
    resume_run: str | None = None,
    executor: ExecutorSettings | None = None,
) -> RunResult:
    """Run with a progress bar, or plain progress lines when not on a terminal."""
    from corix.execution import ExecutorSettings, build_executor, execute_plan, run_stoppable

    tracker = progress_for("sessions")
    try:
        result = run_stoppable(
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
    from corix.execution import RunStatus

    if result.taken_over is not None:
        return  # not this process's run any more: the caller says so in one line
    stats = result.stats
    table = Table(title=f"run {result.run_id}: {result.status}", show_header=False)
    for label, value in summary_rows(stats):
        table.add_row(label, str(value))
    if result.skipped or result.discarded:
        table.add_row("resumed: already complete", str(result.skipped))
        table.add_row("resumed: half-done, redone", str(result.discarded))
    console.print(table)
    if result.storage_error is not None:
        print_error(f"run {result.run_id} stopped: {result.error}")
    elif result.error is not None:
        print_error(f"run {result.run_id} failed: {result.error}")
    if stats.failed_sessions:
        console.print(
            f"[yellow]{stats.failed_sessions} session(s) ended on an application or "
            "simulator error or lost a record to the database; each stores its reason "
            "(`corix sessions show`).[/]"
        )
    if stats.missing_sessions:
        console.print(
            f"[yellow]{stats.missing_sessions} session(s) were refused by the database; "
            f"`corix run --resume {result.run_id}` redoes them.[/]"
        )
    for refusal in stats.refused_records[:5]:
        print_error(f"the database refused {refusal}")
    if result.status is RunStatus.INTERRUPTED:
        console.print(f"interrupted: `corix run --resume {result.run_id}` finishes it")


def summary_rows(summary: RunSummary) -> list[tuple[str, int | float]]:
    """A run's counts and usage, labelled as the CLI prints them."""
    usage = summary.usage
    return [
        ("sessions", summary.sessions),
        ("failed sessions", summary.failed_sessions),
        ("turns", summary.turns),
        ("error turns", summary.error_turns),
        ("model calls", usage.model_calls),
        ("retries", usage.retries),
        ("waited s", usage.waited_s),
        ("failed calls", usage.failed_calls),
        ("prompt tokens", summary.prompt_tokens),
        ("completion tokens", summary.completion_tokens),
        ("simulator prompt tokens", usage.simulator_prompt_tokens),
        ("simulator completion tokens", usage.simulator_completion_tokens),
        ("cost", usage.cost),
        ("wall s", summary.wall_s),
    ]


def run_exit_code(status: RunStatus, *, allow_failures: bool) -> ExitCode:
    """The documented exit code of a run that ended with ``status``."""
    from corix.execution import RunStatus

    if status is RunStatus.COMPLETE_WITH_FAILURES:
        return ExitCode.OK if allow_failures else ExitCode.FAILURES
    return {
        RunStatus.COMPLETE: ExitCode.OK,
        RunStatus.FAILED: ExitCode.FAILED,
        RunStatus.CANCELLED: ExitCode.CANCELLED,
    }.get(status, ExitCode.INTERRUPTED)


UntilOption = Annotated[
    list[str] | None,
    typer.Option(
        "--until",
        help="Run in waves and stop each cell when its confidence sequence is this narrow "
        "(width=0.1) or its gate decision is settled (gate); both may be given.",
    ),
]
WaveOption = Annotated[
    int | None,
    typer.Option("--wave", min=1, help="With --until: dialogues per cell per wave (default 10)."),
]
WaveAnnotatorOption = Annotated[
    list[str] | None,
    typer.Option(
        "--annotator",
        help="With --until: the automated annotators that label each wave (repeat; "
        "default: reference).",
    ),
]


PlanArgument = Annotated[Path | None, typer.Argument(help="Plan YAML file.")]
ResumeOption = Annotated[
    str | None, typer.Option("--resume", help="Finish an interrupted run by its id.")
]
CheckOption = Annotated[
    bool,
    typer.Option(
        "--check", help="Only check the plan (specs, options, variables, packs, endpoints)."
    ),
]
AllowFailuresOption = Annotated[
    bool,
    typer.Option(
        "--allow-failures", help="Exit 0 even when some sessions failed (not when all did)."
    ),
]
CacheOption = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="SQLite file caching model replies (applications and simulated users) "
        "across runs; overrides the plan's cache.",
    ),
]


def run_command(
    plan: PlanArgument = None,
    resume: ResumeOption = None,
    check: CheckOption = False,
    allow_failures: AllowFailuresOption = False,
    cache: CacheOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    ray_workers: RayWorkersOption = None,
    until: UntilOption = None,
    wave: WaveOption = None,
    annotator: WaveAnnotatorOption = None,
    db_pool: DbPoolOption = None,
    db: DbOption = None,
) -> None:
    """Execute a plan: applications × scenarios × levels, stored as they complete."""
    from corix.execution import PreflightError, RunRequest

    if not until and resume is None:
        # Without --until these mean nothing: refused rather than silently ignored.
        given = [flag for flag, value in (("--wave", wave), ("--annotator", annotator)) if value]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise fail(f"{' and '.join(given)} only {verb} with --until (a run in waves)")
    settings = executor_settings(executor, ray_address, ray_workers, db_pool)
    source = _plan_source(plan, resume, check=check, cache=cache)
    request = RunRequest(plan=source, resume_run=resume, executor=settings)
    try:
        if check and source is not None:
            _print_checked(source)
            return
        with database(db, create=resume is None) as database_:
            result = _execute(database_, request, until or [], wave, annotator or [])
    except PreflightError as exc:
        for problem in exc.problems:
            print_error(str(problem))
        raise typer.Exit(ExitCode.USAGE) from None
    if result.storage_error is not None:
        raise typer.Exit(ExitCode.STORAGE)
    if result.taken_over is not None:
        raise fail(result.taken_over, ExitCode.TAKEN_OVER)
    code = run_exit_code(result.status, allow_failures=allow_failures)
    if code is not ExitCode.OK:
        raise typer.Exit(code)


def _plan_source(
    plan: Path | None, resume: str | None, *, check: bool, cache: Path | None
) -> PlanFile | None:
    """The plan file given (with ``--cache`` in force), or ``None`` when resuming."""
    from corix.domain import load_plan_file

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
    return source


def _print_checked(source: PlanFile) -> None:
    from corix.execution import preflight

    checked = asyncio.run(preflight(source))
    console.print(
        f"plan '{checked.plan.name}' is ready: {checked.planned} sessions over "
        f"{len(checked.plan.applications)} application(s) and "
        f"{len(checked.packs)} scenario(s)"
    )


def _execute(
    db: Database, request: RunRequest, until: list[str], wave: int | None, annotators: list[str]
) -> RunResult:
    """Run the request, in waves when asked or when the run it resumes began so. Only a run
    in waves imports the measurement (and NumPy) for its stopping rules."""
    from corix.execution import plan_to_run, was_sequential

    if until or was_sequential(db, request.resume_run):
        from corix.measurement import WavesRequest

        sizing = {"wave": wave} if wave is not None else {}
        waves = WavesRequest(until=until, annotators=annotators, **sizing)
        result = run_sequential(db, request, waves)
        print_summary(result)
    else:
        source = plan_to_run(db, request)
        result = run_with_progress(
            source, db, resume_run=request.resume_run, executor=request.executor
        )
    return result


def executor_settings(
    kind: str, ray_address: str | None, ray_workers: int | None, db_pool: int | None = None
) -> ExecutorSettings:
    """The executor asked for on the command line; a usage error when it cannot run."""
    from corix.execution import ExecutorSettings

    if kind not in ("local", "ray"):
        raise fail(f"unknown executor '{kind}'; known: local, ray")
    if kind == "local" and (ray_address, ray_workers, db_pool) != (None, None, None):
        raise fail("--ray-address, --ray-workers and --db-pool need --executor ray")
    if kind == "ray" and importlib.util.find_spec("ray") is None:
        raise fail("--executor ray needs Ray: pip install 'corix[ray]'")
    if ray_address is not None and not _is_ray_address(ray_address):
        raise fail(
            f"--ray-address '{ray_address}' is not a Ray address: "
            "give HOST:PORT, ray://HOST:PORT, auto or local"
        )
    return ExecutorSettings.model_validate(
        {"kind": kind, "ray_address": ray_address, "ray_workers": ray_workers, "db_pool": db_pool}
    )


def _is_ray_address(address: str) -> bool:
    if address in ("auto", "local"):
        return True
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    return bool(sep and host and port.isdigit() and 0 < int(port) < 65536)
