"""`corix view`: the results home, a read-only page of runs, series and their reports."""

from __future__ import annotations

from typing import Annotated

from typer import Option

from corix.cli.common import DbOption, console, database
from corix.cli.report_cmds import REPORTS_ROOT
from corix.cli.web_cmds import ensure_can_listen


def view_command(
    port: Annotated[int, Option("--port", min=1, max=65535, help="Port to listen on.")] = 8765,
    host: Annotated[
        str, Option("--host", help="Address to listen on (this machine only by default).")
    ] = "127.0.0.1",
    tree: Annotated[str, Option("--tree", help="Tree whose dimensions to compare.")] = (
        "aria_pilot"
    ),
    db: DbOption = None,
) -> None:
    """Browse runs and series with their status, counts, defect rates and reports, and
    compare two runs side by side (read-only; Ctrl-C stops it)."""
    import uvicorn

    from corix.web import results_home_app

    ensure_can_listen(host, port)
    with database(db) as database_:
        app = results_home_app(database_, REPORTS_ROOT.resolve(), tree=tree)
        console.print(f"results home: http://{host}:{port}/ (Ctrl-C stops it)", soft_wrap=True)
        uvicorn.run(app, host=host, port=port, log_level="warning")
