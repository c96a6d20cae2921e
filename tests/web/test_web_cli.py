"""`corix users …`: the first admin from the command line, invitations, listing."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import typer
from typer.testing import CliRunner

from corix.cli.web_cmds import serve_command, users_app
from corix.storage import Database
from corix.web.settings import WebSettings
from corix.web.state import accounts_for

cli = typer.Typer()
cli.add_typer(users_app, name="users")
cli.command("serve")(serve_command)


def test_users_add_invite_and_list(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'corix.db'}"
    runner = CliRunner()
    added = runner.invoke(
        cli,
        ["users", "add", "root", "--role", "admin", "--password-stdin", "--db", url],
        input="a long admin passphrase\n",
    )
    assert added.exit_code == 0, added.output
    assert "created admin 'root'" in added.output
    db = Database(url)
    try:
        user = asyncio.run(
            accounts_for(db, WebSettings()).authenticate("root", "a long admin passphrase")
        )
        assert user is not None and user.role == "admin"

        weak = runner.invoke(
            cli,
            ["users", "add", "bob", "--role", "annotator", "--password-stdin", "--db", url],
            input="short\n",
        )
        assert weak.exit_code == 2 and "at least 10 characters" in weak.output
        twice = runner.invoke(
            cli,
            ["users", "add", "root", "--role", "admin", "--password-stdin", "--db", url],
            input="another long passphrase\n",
        )
        assert twice.exit_code == 2 and "is taken" in twice.output
        bad_role = runner.invoke(cli, ["users", "add", "x", "--role", "wizard", "--db", url])
        assert bad_role.exit_code == 2

        invited = runner.invoke(
            cli,
            [
                "users",
                "invite",
                "--role",
                "field_tester",
                "--db",
                url,
                "--base-url",
                "https://corix.example.org/",
            ],
        )
        assert invited.exit_code == 0
        link = invited.output.strip()
        assert link.startswith("https://corix.example.org/invite/")
        role = accounts_for(db, WebSettings()).invitation_role(link.rsplit("/", 1)[1])
        assert role == "field_tester"

        listed = runner.invoke(cli, ["users", "list", "--db", url])
        assert "root" in listed.output and "admin" in listed.output
    finally:
        db.dispose()


def test_new_accounts_and_invitations_need_a_role_chosen_explicitly(tmp_path: Path) -> None:
    """No default role on the command line: leaving it out creates nothing and lists the
    roles from the least privileged."""
    url = f"sqlite:///{tmp_path / 'corix.db'}"
    corix = Path(sys.executable).with_name("corix")
    for args in (["users", "add", "newbie", "--password-stdin"], ["users", "invite"]):
        run = subprocess.run(
            [str(corix), *args, "--db", url],
            input="a long enough passphrase\n",
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 2, run.stderr
        assert "Missing option '--role'" in run.stderr and "Traceback" not in run.stderr
        assert "field_tester, red_teamer, annotator, senior_annotator, admin" in run.stderr
    db = Database(url)
    try:
        accounts = accounts_for(db, WebSettings())
        assert accounts.users() == [] and accounts.pending_invitations() == []
    finally:
        db.dispose()


def test_serve_has_the_documented_options() -> None:
    shown = CliRunner().invoke(cli, ["serve", "--help"])
    assert shown.exit_code == 0
    for option in ("--db", "--host", "--port", "--secret-key", "--pass-mark", "--attempts"):
        assert option in shown.output


def test_an_invitation_link_needs_the_address_people_reach_the_server_at(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'web.db'}"
    runner = CliRunner()
    guessed = runner.invoke(cli, ["users", "invite", "--role", "field_tester", "--db", url])
    assert guessed.exit_code == 2 and "--public-url" in guessed.output
    bad = runner.invoke(
        cli, ["users", "invite", "--role", "field_tester", "--db", url, "--public-url", "x"]
    )
    assert bad.exit_code == 2 and "http:// or https://" in bad.output
    invited = runner.invoke(
        cli,
        ["users", "invite", "--role", "field_tester", "--db", url],
        env={"CORIX_PUBLIC_URL": "http://127.0.0.1:8123/"},
    )
    assert invited.exit_code == 0, invited.output
    assert invited.output.startswith("http://127.0.0.1:8123/invite/")
