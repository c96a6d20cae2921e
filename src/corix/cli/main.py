"""The ``corix`` command."""

from __future__ import annotations

from typing import Annotated

import typer

from corix import __version__
from corix.cli.agreement_cmds import agreement_command
from corix.cli.annotate_cmds import annotate_command
from corix.cli.annotations_cmds import annotations_app
from corix.cli.apps_cmds import app_app
from corix.cli.common import DEBUG_ENV, DEBUG_FLAG, run_cli
from corix.cli.defects_cmds import defects_command
from corix.cli.demo_cmd import demo_command
from corix.cli.gate_cmd import gate_command
from corix.cli.import_cmd import import_command
from corix.cli.mock_cmd import mock_server_command
from corix.cli.packs_cmds import packs_app
from corix.cli.personas_cmd import personas_command
from corix.cli.release_cmd import release_command
from corix.cli.report_cmds import report_command, tree_app
from corix.cli.runs import export_command, run_command, runs_app, sessions_app
from corix.cli.web_cmds import serve_command, users_app

app = typer.Typer(
    rich_markup_mode=None,
    name="corix",
    help="Measure the risks and impacts of AI applications in context.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"corix {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            DEBUG_FLAG,
            envvar=DEBUG_ENV,
            help="Show the Python traceback of an error.",
        ),
    ] = False,
) -> None:
    """corix: a testbed for AI applications (NIST ARIA levels, automated harm measurement)."""


app.command("demo")(demo_command)
app.command("run")(run_command)
app.command("export")(export_command)
app.command("import")(import_command)
app.command("annotate")(annotate_command)
app.command("defects")(defects_command)
app.command("gate")(gate_command)
app.command("agreement")(agreement_command)
app.command("report")(report_command)
app.command("release")(release_command)
app.command("personas")(personas_command)
app.command("serve")(serve_command)
app.command("mock-server")(mock_server_command)
app.add_typer(runs_app, name="runs")
app.add_typer(sessions_app, name="sessions")
app.add_typer(app_app, name="app")
app.add_typer(packs_app, name="packs")
app.add_typer(annotations_app, name="annotations")
app.add_typer(tree_app, name="tree")
app.add_typer(users_app, name="users")


def main() -> None:
    run_cli(app)


if __name__ == "__main__":
    main()
