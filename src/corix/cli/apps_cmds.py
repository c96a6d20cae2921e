"""`corix app check`: the first thing a submitting team runs."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.text import Text

from corix.cli.common import JsonOption, console, fail, print_json
from corix.config import validation_summary

if TYPE_CHECKING:
    from corix.domain import JsonObject

app_app = typer.Typer(rich_markup_mode=None, help="Applications under test.", no_args_is_help=True)


@app_app.command("check")
def check(
    spec: Annotated[str, typer.Argument(help="Adapter spec, e.g. aria:./my_submission.")],
    auth: Annotated[
        str | None, typer.Option("--auth", help="Credentials as a JSON object.")
    ] = None,
    prompt: Annotated[
        str, typer.Option("--prompt", help="The message to send.")
    ] = "Hello! What can you help me with?",  # corix.apps.DEFAULT_PROMPT
    as_json: JsonOption = False,
) -> None:
    """Open the application, start a session, send one prompt, print reply and timings."""
    from corix.apps import AdapterSpec, check_application

    credentials: JsonObject | None = None
    if auth is not None:
        try:
            credentials = json.loads(auth)
        except json.JSONDecodeError as exc:
            raise fail(f"--auth is not valid JSON: {exc.msg}") from None
        except RecursionError:
            raise fail("--auth is not valid JSON: nested too deeply") from None
        if not isinstance(credentials, dict):
            raise fail("--auth must be a JSON object")
    public = AdapterSpec.parse(spec).public()
    if not as_json:
        console.print(Text.assemble("checking ", (public, "bold")))
    try:
        report = asyncio.run(check_application(spec, credentials, prompt))
    except ValidationError as exc:  # an option of the spec, e.g. openai: without ?model=
        raise fail(f"the spec '{public}' is not valid: {validation_summary(exc)}") from None
    if as_json:
        steps = [dataclasses.asdict(step) for step in report.steps]
        print_json({"spec": public, "ok": report.ok, "steps": steps})
    else:
        for step in report.steps:
            detail = step.detail if step.ok else f"ERROR: {step.detail}"
            console.print(
                f"  {step.name:<14} {step.elapsed_ms:8.1f} ms  {detail}",
                highlight=False,
                markup=False,
            )
    failed = next((step for step in report.steps if not step.ok), None)
    if failed is not None:  # the application, its address or its credentials: bad input
        raise fail(f"the application failed at '{failed.name}': {failed.detail}")
    if not as_json:
        console.print("[green]ok[/]")
