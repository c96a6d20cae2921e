"""`corix demo`: the whole pipeline offline, ending in a page a person opens."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from corix.cli.common import DbOption, console, database
from corix.cli.runs import run_with_progress
from corix.demo import demo_plan
from corix.report import write_sessions_page
from corix.storage import Repository


def demo_command(
    out: Annotated[Path, typer.Option("--out", help="Folder for the report.")] = Path(
        ".corix/reports"
    ),
    concurrency: Annotated[int, typer.Option(help="Sessions at once.")] = 16,
    db: DbOption = None,
) -> None:
    """Test both demo applications in the pilot scenarios, offline, and write a report."""
    with database(db) as database_:
        result = run_with_progress(demo_plan(concurrency=concurrency), database_)
        repo = Repository(database_)
        page = write_sessions_page(repo, result.run_id, out / result.run_id / "index.html")
    console.print(f"report: [bold]{page.resolve()}[/]")
