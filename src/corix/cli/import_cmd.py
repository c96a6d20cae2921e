"""`corix import`: dialogues recorded elsewhere become a run corix can annotate and report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from corix.cli.common import DbOption, console, database, err_console


def import_command(
    path: Annotated[
        Path,
        typer.Argument(help="Dialogues: .jsonl (OpenAI messages), .csv, or an Inspect AI log."),
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
    """
    from corix.levels import import_dialogues

    defaults = {"application": application, "scenario": scenario, "level": level}
    with database(db, create=True) as database_:
        imported = import_dialogues(database_, path, name=name, defaults=defaults)
    for warning in imported.warnings:
        err_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"imported {imported.dialogues} dialogues as run {imported.run_id}", soft_wrap=True
    )
