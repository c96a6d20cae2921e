"""`corix runs …`: list, show, compare, cancel and delete runs."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated

import typer
import yaml
from rich.text import Text

from corix.cli.common import (
    DbOption,
    JsonOption,
    WideOption,
    console,
    database,
    fail,
    print_fields,
    print_json,
    require_terminal,
    wrapping_table,
)
from corix.cli.exit_codes import ExitCode
from corix.cli.judge_notes import print_judge_agreement
from corix.cli.measure_options import SettlingOption, SpecOption, measurement_spec
from corix.cli.run_cmd import summary_rows

if TYPE_CHECKING:
    from corix.measurement import Compared
    from corix.storage import AnnotationJobRecord, WrittenReportRecord


runs_app = typer.Typer(rich_markup_mode=None, help="List and inspect runs.", no_args_is_help=True)


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
    from corix.storage import deletable_run, delete_run

    with database(db) as database_:
        # Before the prompt, so nobody confirms in vain; delete_run checks again.
        row = deletable_run(database_, run)
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
def runs_list(db: DbOption = None, as_json: JsonOption = False, wide: WideOption = False) -> None:
    """All runs, oldest first."""
    from corix.storage import list_runs, shown_status

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
    table = wrapping_table(
        "run", "name", "status", "sessions", "error turns", "created",
        optional=("sessions", "error turns", "created"),
        wide=wide,
    )  # fmt: skip
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
    wide: WideOption = False,
) -> None:
    """Two runs side by side: rates and CoRIx dimensions, the change, and whether the
    intervals overlap. Both are measured under one specification, printed first."""
    from corix.measurement import compare_measurements, measure
    from corix.storage import get_run

    in_force, source = measurement_spec(spec, settling=settling)
    with database(db) as database_:
        get_run(database_, first)
        get_run(database_, second)
        a = measure(database_, [first], in_force, source=source)
        b = measure(database_, [second], in_force, source=source)
        rows = compare_measurements(database_, a, b, tree)
    if as_json:
        print_json(
            {
                "measurement": {"a": a.document(), "b": b.document()},
                "rows": [_compared_json(row) for row in rows],
                "judge_agreement": {
                    "a": [j.model_dump(mode="json") for j in a.judge_agreement()],
                    "b": [j.model_dump(mode="json") for j in b.judge_agreement()],
                },
            }
        )
        return
    settled = f"{first}: {a.settlement.text()}\n{second}: {b.settlement.text()}"
    console.print(Text(f"{a.spec.headline()}\n{settled}", style="dim"))
    _print_compared(rows, (first, second), a.spec.spec.confidence, wide=wide)
    for run_id, measurement in ((first, a), (second, b)):
        if agreements := measurement.judge_agreement():
            console.print(Text(f"{run_id}:", style="dim"))
            print_judge_agreement(agreements)


def _compared_json(row: Compared) -> dict[str, object]:
    return {
        "what": row.what,
        "share": row.share,
        "a": row.a,
        "a_interval": list(row.a_interval),
        "b": row.b,
        "b_interval": list(row.b_interval),
        "change": row.change,
        "change_interval": list(row.change_interval),
        "intervals_overlap": row.overlap,
    }


def _print_compared(
    rows: list[Compared], runs: tuple[str, str], confidence: float, *, wide: bool
) -> None:
    from corix.report import value_with_interval as shown

    console.print(
        Text(
            f"Rates in %, changes in percentage points, each with its {confidence:.0%} "
            "interval; tree values on their own scale.",
            style="dim",
        )
    )
    # The runs' ids name the columns in the title: as headers they alone fill 80 columns.
    table = wrapping_table(
        "what", "A", "B", "change (B − A)", "intervals overlap",
        title=f"A: {runs[0]}, B: {runs[1]}",
        optional=("intervals overlap",),
        wide=wide,
    )  # fmt: skip
    for row in rows:
        overlap = {None: "—", True: "yes", False: "no"}[row.overlap]
        table.add_row(
            Text(row.what),
            shown(row.a, row.a_interval, share=row.share),
            shown(row.b, row.b_interval, share=row.share),
            shown(row.change, row.change_interval, share=row.share, signed=True),
            overlap,
        )
    console.print(table)


@runs_app.command("show")
def runs_show(
    run: Annotated[str, typer.Argument(help="Run id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A run's plan, status and counts, its annotation jobs and the reports written of it.

    With --json, the run's document: the first line of its run file (plan, packs with their
    hashes, annotation jobs, the reports' measurement specifications, summary). Its status
    is the stored one; runs list says when a run's holder is gone."""
    # The document is corix.domain.RunDocument: typed, versioned, and read back as one.
    from corix.domain import run_plan_json
    from corix.storage import (
        annotation_jobs,
        get_run,
        run_document,
        run_totals,
        shown_status,
        written_reports,
    )

    with database(db) as database_:
        if as_json:
            print_json(run_document(database_, run).model_dump(mode="json"))
            return
        row = get_run(database_, run)
        stored = dataclasses.asdict(run_totals(database_, run))
        jobs = annotation_jobs(database_, [run])
        reports = written_reports(database_, [run])
    console.print(f"[bold]{row.id}[/] {row.name} — {shown_status(row)}", soft_wrap=True)
    if row.lease_holder is not None:
        console.print(f"held by {row.lease_holder}", markup=False)
    console.print("stored: " + ", ".join(f"{k} {v}" for k, v in stored.items()), markup=False)
    summary = summary_rows(row.summary)
    if row.summary.missing_sessions:
        summary.append(("missing sessions", row.summary.missing_sessions))
    console.print("summary: " + ", ".join(f"{k} {v}" for k, v in summary), markup=False)
    if row.summary.error is not None:
        console.print(f"stopped by: {row.summary.error}", markup=False)
    _print_annotation_jobs(jobs)
    _print_reports(reports)
    console.print("plan:", markup=False)
    plan = run_plan_json(row.plan)
    console.print(yaml.safe_dump(plan, sort_keys=False, allow_unicode=True), markup=False)


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
