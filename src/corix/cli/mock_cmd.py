"""`corix mock-server`: a local OpenAI-compatible server for tests and benchmarks."""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError

from corix.cli.common import console, fail


def mock_server_command(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free port).")
    ] = 8000,
    latency_ms: Annotated[float, typer.Option(min=0.0, help="Delay before every answer.")] = 0.0,
    fail_429: Annotated[
        float, typer.Option("--fail-429", min=0.0, max=1.0, help="Share answered 429.")
    ] = 0.0,
    fail_500: Annotated[
        float, typer.Option("--fail-500", min=0.0, max=1.0, help="Share answered 500.")
    ] = 0.0,
    fail_timeout: Annotated[
        float,
        typer.Option("--fail-timeout", min=0.0, max=1.0, help="Share that never answers in time."),
    ] = 0.0,
    fail_malformed: Annotated[
        float,
        typer.Option("--fail-malformed", min=0.0, max=1.0, help="Share answered with broken JSON."),
    ] = 0.0,
    judge_noise: Annotated[
        float,
        typer.Option(
            "--judge-noise",
            min=0.0,
            max=1.0,
            help="Share of seeds whose JSON answer is a fresh draw (1: every seed; 0: none).",
        ),
    ] = 1.0,
    retry_after: Annotated[
        float, typer.Option("--retry-after", min=0.0, help="Retry-After seconds on 429.")
    ] = 1.0,
) -> None:
    """Serve /v1/chat/completions from the deterministic mock model, with injected faults."""
    from corix.llm.mock_server import MockServerConfig, run_mock_server

    try:
        config = MockServerConfig(
            host=host,
            port=port,
            latency_ms=latency_ms,
            fail_429=fail_429,
            fail_500=fail_500,
            fail_timeout=fail_timeout,
            fail_malformed=fail_malformed,
            retry_after_s=retry_after,
            judge_noise=judge_noise,
        )
    except ValidationError as exc:
        raise fail("; ".join(error["msg"] for error in exc.errors())) from None
    # Port 0 is chosen by the system: the server prints the address it got once listening.
    where = f" on http://{host}:{port}/v1" if port else ""
    console.print(f"mock OpenAI-compatible server{where} (Ctrl-C stops)")
    try:
        run_mock_server(config)
    except OSError as exc:  # the port is taken, or the host is not an address of this machine
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
