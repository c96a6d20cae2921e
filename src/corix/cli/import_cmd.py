"""`corix import`: dialogues recorded elsewhere become a run corix can annotate and report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from corix.cli.common import DbOption, console, database, err_console, fail


def import_command(
    path: Annotated[
        Path,
        typer.Argument(
            help="Dialogues (.jsonl of OpenAI messages, .csv, an Inspect AI log) or a run "
            "file (corix export --format corix)."
        ),
    ],
    name: Annotated[str | None, typer.Option(help="Name of the new run.")] = None,
    application: Annotated[
        str | None, typer.Option(help="Application, if not in the file.")
    ] = None,
    scenario: Annotated[str | None, typer.Option(help="Scenario pack, if not in the file.")] = None,
    level: Annotated[str | None, typer.Option(help="Level, if not in the file.")] = None,
    db: DbOption = None,
) -> None:
    """Import dialogues recorded elsewhere as a new run: all of them, or nothing.

    Then 'corix annotate RUN', 'corix defects RUN' and 'corix report RUN' as for any run.
    A run file comes back as the run it was: same id, annotations and all (once per
    database).
    """
    from corix.levels import import_dialogues
    from corix.report import is_run_file

    if is_run_file(path):
        _import_run_file(path, given=[name, application, scenario, level], db=db)
        return
    defaults = {"application": application, "scenario": scenario, "level": level}
    with database(db, create=True) as database_:
        imported = import_dialogues(database_, path, name=name, defaults=defaults)
    for warning in imported.warnings:
        err_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"imported {imported.dialogues} dialogues as run {imported.run_id}", soft_wrap=True
    )


def _import_run_file(path: Path, *, given: list[str | None], db: str | None) -> None:
    from corix.report import import_run_file

    if any(value is not None for value in given):
        raise fail(
            "a run file names its run, applications, scenarios and levels: "
            "--name, --application, --scenario and --level do not apply"
        )
    with database(db, create=True) as database_:
        restored = import_run_file(database_, path)
    console.print(
        f"imported run {restored.run_id} ({restored.sessions} sessions) from {path}",
        soft_wrap=True,
    )
    for name, stored in restored.renamed_applications.items():
        console.print(
            f"application '{name}' is stored here with another spec: its sessions use '{stored}'",
            soft_wrap=True,
        )
