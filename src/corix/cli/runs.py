"""`corix run`, `corix runs …`, `corix sessions show`, `corix export`."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml
from pydantic import ValidationError
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
    print_fields,
    print_json,
    require_terminal,
    validation_summary,
    wrapping_table,
)
from corix.cli.exit_codes import ExitCode
from corix.cli.measure_options import SettlingOption, SpecOption, measurement_spec
from corix.cli.progress import progress_for
from corix.cli.sequential_cmd import run_sequential
from corix.errors import unknown_name

if TYPE_CHECKING:
    from corix.domain import RunSummary
    from corix.execution import ExecutorSettings, Plan, PlanFile, RunResult, RunStatus
    from corix.storage import AnnotationJobRecord, Database, MeasuredDialogue, WrittenReportRecord

EXPORT_FORMATS = ("jsonl", "csv", "parquet", "hf")

runs_app = typer.Typer(rich_markup_mode=None, help="List and inspect runs.", no_args_is_help=True)
sessions_app = typer.Typer(rich_markup_mode=None, help="Inspect sessions.", no_args_is_help=True)


def run_with_progress(
    plan: Plan | PlanFile,
    db: Database,
    *,
    resume_run: str | None = None,
    executor: ExecutorSettings | None = None,
) -> RunResult:
    """Run with a progress bar, or plain progress lines when not on a terminal."""
    from corix.execution import ExecutorSettings, build_executor, execute_plan

    tracker = progress_for(console, "sessions")
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
    from corix.execution import RunStatus

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
    int, typer.Option("--wave", min=1, help="With --until: dialogues per cell per wave.")
]
WaveAnnotatorOption = Annotated[
    list[str] | None,
    typer.Option(
        "--annotator",
        help="With --until: the automated annotators that label each wave (repeat; "
        "default: reference).",
    ),
]


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
    until: UntilOption = None,
    wave: WaveOption = 10,
    annotator: WaveAnnotatorOption = None,
    db_pool: DbPoolOption = None,
    db: DbOption = None,
) -> None:
    """Execute a plan: applications × scenarios × levels, stored as they complete."""
    from corix.execution import PlanFile, PreflightError, load_plan_file, preflight
    from corix.storage import (
        StorageUnavailable,
        get_run,
    )

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
        with database(db, create=resume is None) as database_:
            if until or _was_sequential(database_, resume):
                if source is not None:
                    _refuse_cache_on_ray(settings, source.plan)
                result = run_sequential(
                    source,
                    database_,
                    until=until or [],
                    wave=wave,
                    annotators=annotator or [],
                    resume_run=resume,
                    executor=settings,
                )
                print_summary(result)
            elif source is not None:
                _refuse_cache_on_ray(settings, source.plan)
                result = run_with_progress(source, database_, executor=settings)
            else:
                stored = get_run(database_, str(resume))
                stored_plan = _resumable_plan(stored.id, stored.plan)
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
    except StorageUnavailable as exc:
        raise fail(f"the database takes no writes: {exc}", ExitCode.STORAGE) from None
    if result.storage_error is not None:
        raise typer.Exit(ExitCode.STORAGE)
    code = run_exit_code(result.status, allow_failures=allow_failures)
    if code is not ExitCode.OK:
        raise typer.Exit(code)


def _resumable_plan(run: str, stored: dict[str, Any]) -> Plan:
    from corix.execution import Plan

    if stored.get("kind") == "imported":
        raise fail(f"run '{run}' was imported, not made from a plan: there is nothing to resume")
    try:
        return Plan.model_validate(stored)
    except ValidationError as exc:
        problems = validation_summary(exc)
        raise fail(
            f"run '{run}' cannot be resumed: its stored plan is not valid ({problems})"
        ) from None


def _was_sequential(db: Database, resume: str | None) -> bool:
    """Whether ``resume`` names a run started with ``--until`` (it resumes in waves)."""
    from corix.storage import get_run

    return resume is not None and get_run(db, resume).summary.sequential is not None


def _refuse_cache_on_ray(settings: ExecutorSettings, plan: Plan) -> None:
    # Ray workers open their own applications; a cache file on this machine is not theirs.
    if settings.kind == "ray" and plan.cache:
        raise fail("a response cache is a file on this machine; --executor ray runs without one")


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


@runs_app.command("cancel")
def runs_cancel(
    run: Annotated[str, typer.Argument(help="Run id.")],
    db: DbOption = None,
) -> None:
    """Stop a run for good: a running one stops within seconds and is never resumed."""
    from corix.execution import RunStatus
    from corix.storage import set_run_status_if

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
    """Delete a run with its sessions and annotations (not one a live process holds; a
    stale run, whose process died, needs no cancel first)."""
    from corix.storage import (
        delete_run,
        get_run,
        is_stale,
    )

    with database(db) as database_:
        row = get_run(database_, run)
        if row.lease_holder is not None and not is_stale(row.lease_holder, row.lease_heartbeat_at):
            raise fail(
                f"run '{run}' is held by {row.lease_holder}: `corix runs cancel {run}` first"
            )
        if row.evaluation_id is not None:
            raise fail(
                f"run '{run}' belongs to web evaluation '{row.evaluation_id}'; "
                "it is managed in the web app"
            )
        if not yes:
            require_terminal("a confirmation", "--yes")
        if not yes and not typer.confirm(f"delete run {run} and everything stored for it?"):
            raise typer.Exit(ExitCode.USAGE)
        sessions = delete_run(database_, run)
    console.print(f"deleted run {run} and its {sessions} session(s)")


@runs_app.command("list")
def runs_list(db: DbOption = None, as_json: JsonOption = False) -> None:
    """All runs, oldest first."""
    from corix.storage import (
        list_runs,
        shown_status,
    )

    with database(db) as database_:
        rows = list_runs(database_)
    if as_json:
        print_json(
            [
                {
                    "id": r.id,
                    "name": r.name,
                    "status": shown_status(r),
                    "created_at": r.created_at,
                    "summary": r.summary.model_dump(mode="json"),
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
            shown_status(r),
            str(r.summary.sessions),
            str(r.summary.error_turns),
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
    spec: SpecOption = None,
    settling: SettlingOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Two runs side by side: rates and CoRIx dimensions, the change, and whether the
    intervals overlap. Both are measured under one specification, printed first."""
    from corix.measurement import compare_rates, compare_trees, measure
    from corix.storage import get_run

    in_force, source = measurement_spec(spec, settling=settling)
    with database(db) as database_:
        get_run(database_, first)
        get_run(database_, second)
        a = measure(database_, [first], in_force, source=source)
        b = measure(database_, [second], in_force, source=source)
        rows = [
            *compare_rates(a, b, ("harm", "application")),
            *compare_trees(database_, a, b, tree),
        ]
    if as_json:
        print_json(
            {
                "measurement": {"a": a.document(), "b": b.document()},
                "rows": [
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
                ],
            }
        )
        return
    settled = f"{first}: {a.settlement.text()}\n{second}: {b.settlement.text()}"
    console.print(Text(f"{a.spec.headline()}\n{settled}", style="dim"))
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
    from corix.storage import (
        annotation_jobs,
        get_run,
        run_counts,
        shown_status,
        written_reports,
    )

    with database(db) as database_:
        row = get_run(database_, run)
        counts = run_counts(database_, run)
        jobs = annotation_jobs(database_, [run])
        reports = written_reports(database_, [run])
    info = {
        "id": row.id,
        "name": row.name,
        "status": shown_status(row),
        "held_by": row.lease_holder,
        "seed": row.seed,
        "created_at": row.created_at,
        "finished_at": row.finished_at,
        "summary": row.summary.model_dump(mode="json"),
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
    console.print(f"[bold]{row.id}[/] {row.name} — {info['status']}", soft_wrap=True)
    if row.lease_holder is not None:
        console.print(f"held by {row.lease_holder}", markup=False)
    console.print("stored: " + ", ".join(f"{k} {v}" for k, v in counts.items()), markup=False)
    summary = summary_rows(row.summary)
    if row.summary.missing_sessions:
        summary.append(("missing sessions", row.summary.missing_sessions))
    console.print("summary: " + ", ".join(f"{k} {v}" for k, v in summary), markup=False)
    if row.summary.error is not None:
        console.print(f"stopped by: {row.summary.error}", markup=False)
    _print_annotation_jobs(jobs)
    _print_reports(reports)
    console.print("plan:", markup=False)
    console.print(yaml.safe_dump(row.plan, sort_keys=False, allow_unicode=True), markup=False)


def _print_annotation_jobs(jobs: list[AnnotationJobRecord]) -> None:
    from corix.report import annotator_label, endpoint_text, repeats_text, targets_text

    if not jobs:
        console.print("annotation jobs: none", markup=False)
        return
    console.print("annotation jobs:", markup=False)
    for job in jobs:
        settings = job.settings
        started = job.started_at.strftime("%Y-%m-%d %H:%M:%S")
        print_fields(
            f"{started} {annotator_label(settings.stored_as)} ({settings.annotator})",
            [
                ("asked", repeats_text(settings)),
                ("targets", targets_text(settings)),
                ("endpoint", endpoint_text(settings)),
            ],
        )


def _print_reports(reports: list[WrittenReportRecord]) -> None:
    from corix.report import settings_text

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
        print_fields(
            f"{written} report settings {report.digest}{series} (corix {settings.corix_version})",
            [
                ("settings", settings_text(settings)),
                ("measurement", measurement),
                ("written to", ", ".join(output.path for output in settings.outputs)),
            ],
            paths=("measurement", "written to"),
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
    spec: SpecOption = None,
    settling: SettlingOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A run's sessions, filtered; violations are the measurement core's settled verdicts
    under the specification in force (printed first)."""
    from corix.measurement import measure
    from corix.storage import get_run

    in_force, source = measurement_spec(spec, settling=settling)
    with database(db) as database_:
        get_run(database_, run)
        measurement = measure(database_, [run], in_force, source=source)
    _check_filters(
        measurement.dialogues,
        application=application,
        scenario=scenario,
        level=level,
    )
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
    console.print(Text(measurement.headline(), style="dim"))
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


def _check_filters(dialogues: Sequence[MeasuredDialogue], **given: str | None) -> None:
    """A filter value the run cannot hold is a mistake, not an empty table."""
    from corix.domain import Level

    known = {
        "application": {d.application for d in dialogues},
        "scenario": {d.scenario for d in dialogues},
        "level": {level.value for level in Level},
    }
    for name, value in given.items():
        if value is not None and value not in known[name]:
            raise unknown_name(name, value, known[name])


@sessions_app.command("show")
def sessions_show(
    session: Annotated[str, typer.Argument(help="Session id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A readable transcript of one session."""
    from corix.report import render_transcript
    from corix.storage import load_session, session_questionnaire

    with database(db) as database_:
        record = load_session(database_, session)
        answers = session_questionnaire(database_, session)
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
    from corix.storage import (
        get_run,
        series_runs,
    )

    if fmt not in EXPORT_FORMATS:
        raise fail(f"unknown format '{fmt}'; known: {', '.join(EXPORT_FORMATS)}")
    if (run is None) == (series is None):
        raise fail("give a run id or --series NAME (one of them)")
    if fmt != "jsonl" and output is None:
        raise fail(f"--format {fmt} writes a folder of tables: give --output DIR")
    if fmt == "jsonl" and hit_k is not None:
        raise fail("--hit-k writes tables: give --format csv, parquet or hf")
    with database(db) as database_:
        if run is not None:
            get_run(database_, run)
        run_ids = [run] if run is not None else series_runs(database_, str(series))
        if not run_ids:
            raise fail(f"no evaluation series named '{series}' with runs")
        if fmt != "jsonl":
            assert output is not None  # checked above
            measurement = measure_in_chunks(database_, run_ids)
            tracker = progress_for(console, "exporting sessions")
            try:
                counts = export_tables(
                    database_,
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
        lines = export_jsonl(database_, *run_ids, progress=tracker)
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
