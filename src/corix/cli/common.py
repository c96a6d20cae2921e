"""What every command shares: the console, the database option and error reporting."""

from __future__ import annotations

import json
import os
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from copy import copy
from itertools import takewhile
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO

import typer
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Column, Table
from rich.text import Text

# typer >= 0.29 vendors click: its usage errors are not the installed click's classes
# (pyproject pins typer to the series this import was written against).
from typer._click import Context
from typer._click.exceptions import NoArgsIsHelpError, UsageError
from typer.core import TyperGroup

from corix.cli.exit_codes import ExitCode
from corix.cli.input_errors import describe_input_error
from corix.cli.streams import escape_unencodable, output_was_closed, silence_closed_output
from corix.errors import CorixError

if TYPE_CHECKING:  # opening a database loads SQLAlchemy and Alembic: only commands that do
    from corix.storage import Database


class _CommandConsole(Console):
    def on_broken_pipe(self) -> None:
        # Rich exits 1 itself; the command line ends a closed pipe with its own code.
        self.quiet = True
        raise BrokenPipeError


console = _CommandConsole()
err_console = _CommandConsole(stderr=True)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="CORIX_DB",
        help="Database URL (default: SQLite in ./.corix/corix.db; postgresql://… for a server).",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
WideOption = Annotated[
    bool, typer.Option("--wide", help="Show every column, even where the terminal is narrow.")
]
RunArgument = Annotated[str, typer.Argument(help="Run id.")]
ExecutorOption = Annotated[
    str, typer.Option("--executor", help="local (default) or ray (needs the ray extra).")
]
RayAddressOption = Annotated[
    str | None,
    typer.Option("--ray-address", help="An existing Ray cluster; default: start one here."),
]
RayWorkersOption = Annotated[
    int | None,
    typer.Option("--ray-workers", min=1, help="Ray worker processes (default: one per CPU)."),
]
DbPoolOption = Annotated[
    int | None,
    typer.Option(
        "--db-pool",
        min=1,
        help="With --executor ray on PostgreSQL: connections the workers hold together "
        "(default: 2 per worker).",
    ),
]


_UNBOUNDED = 10_000


class FittingTable(Table):
    """A table whose cells wrap between words, never inside one.

    Each column gets at least its longest word; the width left over goes to the columns
    with the most text. When even that does not fit the terminal (an 80-column one, say),
    the ``optional`` columns are left out, last first, with a line naming them (unless
    ``wide``); then the leading ``keys`` columns become headings over one table per value
    (first one key, then two, …), each tried with the optional columns again. Only if
    nothing fits is each row printed as a block of ``column: value`` lines, so every id,
    name and number stays whole and readable.
    """

    optional: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    wide: bool = False

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # Measured without the terminal's limit: the narrowest and widest the table can be.
        unbounded = options.update_width(_UNBOUNDED)
        table = Measurement.get(console, unbounded, self)
        if table.minimum > options.max_width:
            yield from self._fitted(console, options)
            return
        if table.maximum <= options.max_width:
            yield from super().__rich_console__(console, options)
            return
        ranges = [self._column_range(console, unbounded, column) for column in self.columns]
        spare = options.max_width - table.minimum
        growth = [high - low for low, high in ranges]
        total = sum(growth) or 1
        saved = [column.width for column in self.columns]
        for column, (low, _high), grow in zip(self.columns, ranges, growth, strict=True):
            column.width = low + spare * grow // total
        try:
            yield from super().__rich_console__(console, options)
        finally:
            for column, width in zip(self.columns, saved, strict=True):
                column.width = width

    def _fitted(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Fewer columns, then headings, whichever fits first; else one block per row."""
        unbounded = options.update_width(_UNBOUNDED)
        headers = [str(column.header) for column in self.columns]
        keys = len(list(takewhile(lambda header: header in self.keys, headers)))
        optional = [] if self.wide else [h for h in reversed(self.optional) if h in headers]
        for lifted in range(keys + 1):
            for left_out in range(len(optional) + 1):
                hidden = set(optional[:left_out])
                kept = [c for c in self.columns[lifted:] if str(c.header) not in hidden]
                parts = self._sections(kept, lifted)
                widths = (Measurement.get(console, unbounded, part).minimum for _, part in parts)
                if all(width <= options.max_width for width in widths):
                    yield from self._print_sections(parts, [h for h in headers if h in hidden])
                    return
        yield from self._blocks()

    def _sections(self, kept: list[Column], lifted: int) -> list[tuple[Text | None, Table]]:
        """The rows under a heading per run of equal values in the first ``lifted`` columns."""
        cells = [list(column.cells) for column in self.columns]
        sections: list[tuple[Text | None, Table]] = []
        last: tuple[str, ...] | None = None
        for row in range(self.row_count):
            values = tuple(str(cells[index][row]) for index in range(lifted))
            if not sections or values != last:
                heading = " · ".join(
                    f"{self.columns[index].header}: {value}" for index, value in enumerate(values)
                )
                part = FittingTable(*(copy(c) for c in kept), title=None)
                for column in part.columns:
                    column._cells = []  # a copy starts empty: it holds this section's rows
                sections.append((Text(heading, style="bold") if lifted else None, part))
                last = values
            sections[-1][1].add_row(*(cells[self.columns.index(c)][row] for c in kept))
        return sections

    def _print_sections(
        self, parts: list[tuple[Text | None, Table]], hidden: list[str]
    ) -> RenderResult:
        if self.title and parts[0][0] is not None:
            yield Text(str(self.title), style="bold")
        elif self.title:
            parts[0][1].title, parts[0][1].title_justify = self.title, "left"
        for heading, part in parts:
            if heading is not None:
                yield heading
            yield part
        if hidden:
            yield Text(f"hidden to fit: {', '.join(hidden)} (--wide shows them)", style="dim")

    @staticmethod
    def _column_range(console: Console, options: ConsoleOptions, column: Column) -> tuple[int, int]:
        cells = [column.header, *column.cells]
        found = [Measurement.get(console, options, cell) for cell in cells]
        return max(m.minimum for m in found), max(m.maximum for m in found)

    def _blocks(self) -> RenderResult:
        if self.title:
            yield Text(str(self.title), style="bold")
        headers = [str(column.header) for column in self.columns]
        cells = [list(column.cells) for column in self.columns]
        for row in range(self.row_count):
            block = Table.grid(padding=(0, 1))
            block.add_column(style="dim", no_wrap=True)
            block.add_column(overflow="fold")
            for header, column in zip(headers, cells, strict=True):
                block.add_row(header, column[row])
            yield block
            yield Text("")


def wrapping_table(
    *headers: str,
    title: str | None = None,
    optional: Sequence[str] = (),
    keys: Sequence[str] = (),
    wide: bool = False,
) -> Table:
    """A table whose cells wrap rather than cut: ids and names must stay readable whole.

    ``optional`` names the columns of least value, left out (last first) when the table
    would not fit the terminal otherwise; ``keys`` the leading columns that may become
    headings over the rows that share their values; ``wide`` keeps every column."""
    columns = [Column(header=Text(header), overflow="fold") for header in headers]
    table = FittingTable(*columns, title=title, title_justify="left")
    table.optional, table.keys, table.wide = tuple(optional), tuple(keys), wide
    return table


def print_fields(
    heading: str, fields: Sequence[tuple[str, str]], *, paths: Sequence[str] = ()
) -> None:
    """An indented heading, then ``label: value`` lines whose values wrap between words
    under themselves (never inside a word, never past the width). The fields named in
    ``paths`` hold file paths: they stay on one line, to be copied or clicked whole."""
    console.print(Padding(Text(heading), (0, 0, 0, 2), expand=False))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for label, value in fields:
        if label not in paths:
            grid.add_row(Text(f"{label}:"), Text(value))
    console.print(Padding(grid, (0, 0, 0, 4), expand=False))
    for label, value in fields:
        if label in paths:
            console.print(Text(f"    {label}: {value}"), soft_wrap=True)


def split_names(values: Sequence[str] | None) -> tuple[str, ...] | None:
    """Names given as repeated options and/or comma-separated lists."""
    if not values:
        return None
    return tuple(name.strip() for value in values for name in value.split(",") if name.strip())


def open_db(url: str | None, *, create: bool = False) -> Database:
    from corix.cli.database_errors import open_database
    from corix.storage import default_url

    return open_database(url or default_url(), create=create)


@contextmanager
def database(url: str | None, *, create: bool = False) -> Iterator[Database]:
    """The database of ``--db``; only commands that make records may ``create`` it."""
    from sqlalchemy.exc import DBAPIError

    from corix.cli.database_errors import database_label
    from corix.storage import StorageUnavailable, storage_trouble

    db = open_db(url, create=create)
    try:
        yield db
    except (DBAPIError, StorageUnavailable) as exc:
        # A database that takes no writes (read-only, full, locked): named, never a bug.
        cause = storage_trouble(exc)
        if cause is None:
            raise
        label = database_label(db.url)
        raise fail(f"the database {label} takes no writes: {cause}", ExitCode.STORAGE) from None
    finally:
        db.dispose()


def require_terminal(what: str, flag: str) -> None:
    """Fail fast, naming the flag to use, when ``what`` would wait on a missing terminal."""
    if not sys.stdin.isatty():
        raise fail(f"{what} needs a terminal, and standard input is not one: use {flag}")


def print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str, ensure_ascii=False))


def print_error(message: str) -> None:
    """One line on stderr, however long: a script or a person reads it whole."""
    err_console.print(
        Text.assemble(("error:", "bold red"), " ", " ".join(message.split())),
        highlight=False,
        soft_wrap=True,
    )


def fail(message: str, code: int = ExitCode.USAGE) -> typer.Exit:
    print_error(message)
    return typer.Exit(code)


DEBUG_FLAG = "--debug"
DEBUG_ENV = "CORIX_DEBUG"


def debug_requested(argv: Sequence[str]) -> bool:
    """``corix --debug …`` (before the command) or ``CORIX_DEBUG=1`` asks for tracebacks."""
    leading = []
    for arg in argv:
        if not arg.startswith("-"):
            break
        leading.append(arg)
    return DEBUG_FLAG in leading or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def usage_message(exc: UsageError) -> str:
    ctx = exc.ctx
    if ctx is None:
        return exc.format_message()
    if isinstance(exc, NoArgsIsHelpError):
        commands: list[str] = getattr(ctx.command, "list_commands", lambda _ctx: [])(ctx)
        choices = f": {', '.join(commands)}" if commands else ""
        return f"'{ctx.command_path}' needs a command{choices} (see '{ctx.command_path} --help')"
    return f"{exc.format_message()} (see '{ctx.command_path} --help')"


def run_cli(app: typer.Typer, argv: Sequence[str] | None = None) -> None:
    """Run the Typer app; every failure ends as one line on stderr and a documented code.

    Usage errors and bad input exit with ``ExitCode.USAGE``; anything unexpected is a bug,
    named in one line with ``ExitCode.INTERNAL_ERROR``. ``--debug`` shows the traceback.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = debug_requested(args)
    escape_unencodable()
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            code = app(args=args, prog_name="corix", standalone_mode=False)
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except BrokenPipeError:
        _output_closed()
    except SystemExit:
        if output_was_closed():
            _output_closed()
        raise
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        raise SystemExit(ExitCode.INTERRUPTED) from None
    except UsageError as exc:
        _report(exc, usage_message(exc), debug)
        raise SystemExit(ExitCode.USAGE) from None
    except CorixError as exc:
        _report(exc, _problem_lines(exc), debug)
        raise SystemExit(ExitCode.USAGE) from None
    except typer.TyperException as exc:
        _report(exc, exc.format_message(), debug)
        raise SystemExit(ExitCode.USAGE) from None
    except (OSError, UnicodeDecodeError) as exc:
        _report(exc, describe_input_error(exc) or str(exc), debug)
        raise SystemExit(ExitCode.USAGE) from None
    except Exception as exc:
        _report(exc, f"internal error: {type(exc).__name__}: {exc}", debug, hint=True)
        raise SystemExit(ExitCode.INTERNAL_ERROR) from None
    raise SystemExit(code if isinstance(code, int) else ExitCode.OK)


class InterruptibleGroup(TyperGroup):
    """The root command group: a Ctrl-C inside a running command reaches :func:`run_cli`
    as an abort. Typer would turn it into a bare exit code 130 (outside standalone mode),
    which :func:`run_cli` cannot tell from a command's own exit 130, so no "aborted"."""

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise typer.Abort() from None


def _problem_lines(exc: CorixError) -> list[str]:
    """An error listing several problems (a plan, preflight, a label file) prints one line
    for each: its problems when they are errors themselves, else its message's lines."""
    problems = getattr(exc, "problems", None)
    if problems and all(isinstance(problem, BaseException) for problem in problems):
        return [str(problem) for problem in problems]
    return [line.strip() for line in str(exc).splitlines() if line.strip()] or [repr(exc)]


def _output_closed() -> NoReturn:
    silence_closed_output()
    raise SystemExit(ExitCode.OUTPUT_CLOSED) from None


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning is one line saying what to change, not Python's file and source line."""
    err_console.print(
        Text.assemble(("warning:", "bold yellow"), " ", " ".join(str(message).split())),
        highlight=False,
        soft_wrap=True,
    )


def _report(
    exc: BaseException, message: str | list[str], debug: bool, *, hint: bool = False
) -> None:
    lines = [message] if isinstance(message, str) else message
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    elif hint:
        lines[-1] += f" (rerun as 'corix {DEBUG_FLAG} …' for the traceback)"
    for line in lines:
        print_error(line)
