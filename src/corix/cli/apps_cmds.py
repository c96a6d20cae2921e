"""`corix app check`: the first thing a submitting team runs."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer

from corix.apps import AdapterSpec
from corix.apps.check import DEFAULT_PROMPT, check_application
from corix.cli.common import console, fail

app_app = typer.Typer(help="Applications under test.", no_args_is_help=True)


@app_app.command("check")
def check(
    spec: Annotated[str, typer.Argument(help="Adapter spec, e.g. aria:./my_submission.")],
    auth: Annotated[
        str | None, typer.Option("--auth", help="Credentials as a JSON object.")
    ] = None,
    prompt: Annotated[str, typer.Option("--prompt", help="The message to send.")] = DEFAULT_PROMPT,
) -> None:
    """Open the application, start a session, send one prompt, print reply and timings."""
    credentials: dict[str, Any] | None = None
    if auth is not None:
        try:
            credentials = json.loads(auth)
        except json.JSONDecodeError as exc:
            raise fail(f"--auth is not valid JSON: {exc.msg}") from None
        if not isinstance(credentials, dict):
            raise fail("--auth must be a JSON object")
    console.print(f"checking [bold]{AdapterSpec.parse(spec).public()}[/]")
    report = asyncio.run(check_application(spec, credentials, prompt))
    for step in report.steps:
        detail = step.detail if step.ok else f"ERROR: {step.detail}"
        console.print(
            f"  {step.name:<14} {step.elapsed_ms:8.1f} ms  {detail}", highlight=False, markup=False
        )
    if not report.ok:
        raise typer.Exit(1)
    console.print("[green]ok[/]")
