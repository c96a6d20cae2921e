"""`corix app check`: the first thing a submitting team runs."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Annotated, Any

import typer

from corix.apps import AdapterSpec, build_application
from corix.cli.common import console, fail

app_app = typer.Typer(help="Applications under test.", no_args_is_help=True)


async def _check(
    spec: str, auth: dict[str, Any] | None, prompt: str
) -> list[tuple[str, float, str]]:
    steps: list[tuple[str, float, str]] = []

    async def timed(name: str, coro: Any) -> Any:
        started = time.perf_counter()
        result = await coro
        steps.append((name, (time.perf_counter() - started) * 1000, ""))
        return result

    application = build_application(spec)
    try:
        await timed("open", application.open(auth))
        version = await timed("version", application.version())
        steps[-1] = (steps[-1][0], steps[-1][1], str(version))
        session = await timed("start session", application.start_session())
        reply = await timed("respond", session.respond(prompt))
        steps[-1] = (
            steps[-1][0],
            steps[-1][1],
            reply.text if reply.ok else f"ERROR: {reply.error}",
        )
        await timed("end session", session.end())
    finally:
        await timed("close", application.close())
    return steps


@app_app.command("check")
def check(
    spec: Annotated[str, typer.Argument(help="Adapter spec, e.g. aria:./my_submission.")],
    auth: Annotated[
        str | None, typer.Option("--auth", help="Credentials as a JSON object.")
    ] = None,
    prompt: Annotated[
        str, typer.Option("--prompt", help="The message to send.")
    ] = "Hello! What can you help me with?",
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
    steps = asyncio.run(_check(spec, credentials, prompt))
    failed = False
    for name, elapsed_ms, detail in steps:
        console.print(f"  {name:<14} {elapsed_ms:8.1f} ms  {detail}", highlight=False, markup=False)
        failed |= detail.startswith("ERROR:")
    if failed:
        raise typer.Exit(1)
    console.print("[green]ok[/]")
