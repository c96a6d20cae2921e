"""What every command shares: the console, the database option and error reporting."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table
from rich.text import Text

from corix.errors import CorixError
from corix.storage import Database, default_url

console = Console()
err_console = Console(stderr=True)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="CORIX_DB",
        help="Database URL (default: SQLite in ./.corix/corix.db; postgresql://… for a server).",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
RunArgument = Annotated[str, typer.Argument(help="Run id.")]


def wrapping_table(*headers: str, title: str | None = None) -> Table:
    """A table whose cells wrap rather than cut: ids and names must stay readable whole."""
    columns = [Column(header=Text(header), overflow="fold") for header in headers]
    return Table(*columns, title=title, title_justify="left")


def split_names(values: Sequence[str] | None) -> tuple[str, ...] | None:
    """Names given as repeated options and/or comma-separated lists."""
    if not values:
        return None
    return tuple(name.strip() for value in values for name in value.split(",") if name.strip())


def open_db(url: str | None) -> Database:
    return Database(url or default_url())


@contextmanager
def database(url: str | None) -> Iterator[Database]:
    db = open_db(url)
    try:
        yield db
    finally:
        db.dispose()


def print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str, ensure_ascii=False))


def fail(message: str, code: int = 2) -> typer.Exit:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def run_cli(app: typer.Typer) -> None:
    """Run the Typer app, printing corix errors as one clear line instead of a traceback."""
    try:
        code = app(standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except CorixError as exc:
        message = escape(str(exc))
        err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
        raise SystemExit(2) from None
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except (click.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        raise SystemExit(130) from None
    raise SystemExit(code if isinstance(code, int) else 0)
