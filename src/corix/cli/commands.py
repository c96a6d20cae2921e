"""The ``corix`` command's tree: every command and group, with their summaries."""

from __future__ import annotations

import inspect
from typing import Annotated

import typer

from corix.cli.agreement_cmds import agreement_command
from corix.cli.annotate_cmds import annotate_command
from corix.cli.annotations_cmds import annotations_app
from corix.cli.apps_cmds import app_app
from corix.cli.common import DEBUG_ENV, DEBUG_FLAG, InterruptibleGroup
from corix.cli.defects_cmds import defects_command
from corix.cli.demo_cmd import demo_command
from corix.cli.export_cmd import export_command
from corix.cli.gate_cmd import gate_command
from corix.cli.import_cmd import import_command
from corix.cli.init_cmd import init_command
from corix.cli.mock_cmd import mock_server_command
from corix.cli.packs_cmds import packs_app
from corix.cli.personas_cmd import personas_command
from corix.cli.plan_cmds import plan_app
from corix.cli.plan_labels_cmd import labels_command
from corix.cli.release_cmd import release_command
from corix.cli.report_cmds import report_command, tree_app
from corix.cli.run_cmd import run_command
from corix.cli.runs_cmds import runs_app
from corix.cli.sessions_cmds import sessions_app
from corix.cli.validity_cmds import validity_app
from corix.cli.view_cmd import view_command
from corix.cli.web_cmds import serve_command, users_app

app = typer.Typer(
    cls=InterruptibleGroup,
    rich_markup_mode=None,
    name="corix",
    help="Measure the risks and impacts of AI applications in context.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
)


def _version(value: bool) -> None:
    if value:
        from corix import __version__

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


# Short summaries for the command list: whole sentences that fit 80 columns.
app.command("demo", short_help="Test, annotate, score and report the demo offline.")(demo_command)
app.command("init", short_help="Write a commented starter plan.")(init_command)
app.command("run", short_help="Execute a plan; a stopped run resumes.")(run_command)
app.command("export", short_help="Sessions as JSON lines, or tables of everything.")(export_command)
app.command("import", short_help="Dialogues recorded elsewhere become a run.")(import_command)
app.command("annotate", short_help="Annotate a run's sessions.")(annotate_command)
app.command("defects", short_help="Defect rates with intervals, per source and harm.")(
    defects_command
)
app.command("gate", short_help="Check defect rates against thresholds (CI).")(gate_command)
app.command("agreement", short_help="Agreement between two annotators or groups.")(
    agreement_command
)
app.command("report", short_help="Write the HTML, Markdown and JSON report.")(report_command)
app.command("release", short_help="Release a run as an anonymized dataset.")(release_command)
app.command("personas", short_help="Persona coverage of a run.")(personas_command)
app.command("serve", short_help="Serve the web testbed for people.")(serve_command)
app.command("view", short_help="Browse runs, series, reports; compare two runs.")(view_command)
app.command("mock-server", short_help="A local OpenAI-compatible mock server.")(mock_server_command)
app.add_typer(runs_app, name="runs")
app.add_typer(sessions_app, name="sessions")
app.add_typer(app_app, name="app")
app.add_typer(packs_app, name="packs")
app.add_typer(annotations_app, name="annotations")
app.add_typer(tree_app, name="tree")
plan_app.command("labels")(labels_command)
app.add_typer(plan_app, name="plan")
app.add_typer(users_app, name="users")
app.add_typer(validity_app, name="validity")


def _whole_summaries(typer_app: typer.Typer) -> None:
    """Give every subcommand its docstring's first paragraph as its summary.

    Without one, click cuts a command's summary to fit the listing and ends it with
    "..."; a summary given is wrapped instead, whole.
    """
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _whole_summaries(group.typer_instance)
    for command in typer_app.registered_commands:
        if command.short_help is None and command.callback is not None:
            doc = inspect.getdoc(command.callback) or ""
            command.short_help = " ".join(doc.split("\n\n")[0].split()) or None


_whole_summaries(app)
