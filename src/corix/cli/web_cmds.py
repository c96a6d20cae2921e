"""`corix serve` and `corix users …`: the web testbed and the people who sign in to it."""

from __future__ import annotations

import re
import socket
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from corix.cli.common import (
    DbOption,
    console,
    database,
    fail,
    require_terminal,
    wrapping_table,
)
from corix.cli.exit_codes import ExitCode
from corix.web import Role, WebSettings

if TYPE_CHECKING:
    from corix.storage import Database
    from corix.web import Accounts

users_app = typer.Typer(
    rich_markup_mode=None,
    help="Manage the people who sign in to the web testbed.",
    no_args_is_help=True,
)

RoleOption = Annotated[
    Role,
    typer.Option(
        "--role",
        case_sensitive=False,
        help=(
            "field_tester, red_teamer, annotator, senior_annotator or admin "
            "(least privileged first; give the least the person needs)."
        ),
    ),
]

_DEFAULTS = WebSettings()  # the option defaults shown by --help (its random key goes unused)


HostOption = Annotated[str, typer.Option("--host", help="Address to listen on.")]
PublicUrlOption = Annotated[
    str | None,
    typer.Option(
        "--public-url",
        envvar="CORIX_PUBLIC_URL",
        help="Where people reach the server (e.g. https://corix.example.org behind a proxy); "
        "invitation links start with it.",
    ),
]
PortOption = Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")]
SecretKeyOption = Annotated[
    str | None,
    typer.Option(
        "--secret-key",
        envvar="CORIX_SECRET_KEY",
        show_default=False,
        help="Key that signs form tokens; set it so open forms survive a restart.",
    ),
]
PassMarkOption = Annotated[
    float,
    typer.Option("--pass-mark", min=0.01, max=1.0, help="Share of gold answers that passes."),
]
AttemptsOption = Annotated[
    int, typer.Option("--attempts", min=1, help="Qualification attempts per annotator.")
]
CooldownOption = Annotated[
    float,
    typer.Option("--cooldown-minutes", min=0, help="Wait after a failed qualification."),
]
TrustedProxyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--trusted-proxy",
        help="Address of a reverse proxy whose X-Forwarded-For is believed (repeatable); "
        "without it the header is ignored, so clients cannot choose their own address.",
    ),
]
WorkersOption = Annotated[
    int,
    typer.Option(
        "--workers",
        min=1,
        help="Server processes on this port; each serves any tester (nothing a request "
        "needs lives in one process). One per core is a good start.",
    ),
]


def serve_command(
    db: DbOption = None,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    secret_key: SecretKeyOption = None,
    pass_mark: PassMarkOption = _DEFAULTS.qualification_pass_mark,
    attempts: AttemptsOption = _DEFAULTS.qualification_max_attempts,
    cooldown_minutes: CooldownOption = _DEFAULTS.qualification_cooldown_minutes,
    trusted_proxy: TrustedProxyOption = None,
    workers: WorkersOption = 1,
    public_url: PublicUrlOption = None,
) -> None:
    """Serve the human testbed: tester sessions, questionnaires, annotation, admin."""
    # One key for every process: a form rendered by one process is accepted by another.
    from sqlalchemy.engine import make_url

    from corix.web import ServeConfig, WebSettings, serve

    settings = WebSettings(
        qualification_pass_mark=pass_mark,
        qualification_max_attempts=attempts,
        qualification_cooldown_minutes=cooldown_minutes,
        public_url=_public_url(public_url),
        **({"secret_key": secret_key} if secret_key is not None else {}),
    )
    ensure_can_listen(host, port)
    with database(db, create=True) as database_:  # migrated here, once, before any process starts
        url = database_.url
    if secret_key is None:
        console.print(
            "[yellow]No CORIX_SECRET_KEY set: forms left open expire when the server restarts.[/]"
        )
    shown = make_url(url).render_as_string(hide_password=True)
    console.print(
        f"corix web testbed on http://{host}:{port}  (database: {shown}; "
        f"{workers} process{'es' if workers > 1 else ''})"
    )
    serve(
        ServeConfig(database_url=url, settings=settings),
        host=host,
        port=port,
        workers=workers,
        trusted_proxies=trusted_proxy,
    )
    # The server returns only once stopped by SIGINT or SIGTERM (its processes shut down
    # cleanly first): an interruption, as for every long command.
    raise typer.Exit(ExitCode.INTERRUPTED)


def ensure_can_listen(host: str, port: int) -> None:
    """Fail before announcing the server when its address is taken or not this machine's."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        socket.create_server((host, port), family=family).close()
    except OSError as exc:
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


@users_app.command("add")
def users_add(
    username: Annotated[str, typer.Argument(help="Lower-case letters, digits, . - _")],
    role: RoleOption,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Create an account (for the first admin; invite everyone else)."""
    from corix.web import InputError, ServiceError

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        require_terminal("a password prompt", "--password-stdin")
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    with database(db, create=True) as database_:
        accounts = _accounts(database_)
        try:
            user = accounts.create_user(username, password, role)
        except InputError as exc:
            details = "; ".join(f"{field}: {text}" for field, text in exc.problems.items())
            raise fail(f"{exc} ({details})" if details else str(exc)) from None
        except ServiceError as exc:
            raise fail(str(exc)) from None
    console.print(f"created {user.role.label.lower()} '{user.username}'")


@users_app.command("invite")
def users_invite(
    role: RoleOption,
    public_url: Annotated[
        str | None,
        typer.Option(
            "--public-url",
            "--base-url",
            envvar="CORIX_PUBLIC_URL",
            help="Where people reach the server, e.g. http://127.0.0.1:8000 (the address "
            "and port `corix serve` listens on, or its public address behind a proxy).",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Print a single-use invitation link for a new account with ROLE."""
    if public_url is None:  # a guessed address would be a link that does not open
        raise fail(
            "give --public-url (where people reach `corix serve`, e.g. "
            "http://127.0.0.1:8000) or set CORIX_PUBLIC_URL; the admin's users page makes "
            "links with the server's own address"
        )
    base = _public_url(public_url)
    with database(db, create=True) as database_:
        token = _accounts(database_).invite(role, created_by=None)
    typer.echo(f"{base}/invite/{token}")


def _public_url(url: str | None) -> str | None:
    """``url`` without its trailing slash, refused unless it is an http(s) address."""
    if url is None:
        return None
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        raise fail(f"--public-url must be an http:// or https:// address, got {url!r}")
    return url.rstrip("/")


@users_app.command("list")
def users_list(db: DbOption = None) -> None:
    """Every account with its role."""
    with database(db) as database_:
        users = _accounts(database_).users()
    table = wrapping_table("username", "role", "active", "created")
    for user in users:
        table.add_row(
            Text(user.username),
            Text(user.role.value),
            Text("yes" if user.active else "no"),
            Text(f"{user.created_at:%Y-%m-%d %H:%M}"),
        )
    console.print(table)


def _accounts(database_: Database) -> Accounts:
    from corix.web import WebSettings, accounts_for

    return accounts_for(database_, WebSettings())
