"""`corix mock-server`: a local OpenAI-compatible server for tests and benchmarks."""

from __future__ import annotations

from typing import Annotated

import typer

from corix.cli.common import console
from corix.llm.mock_server import MockServerConfig, run_mock_server


def mock_server_command(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
    latency_ms: Annotated[float, typer.Option(help="Delay before every answer.")] = 0.0,
    fail_429: Annotated[float, typer.Option("--fail-429", help="Share answered 429.")] = 0.0,
    fail_500: Annotated[float, typer.Option("--fail-500", help="Share answered 500.")] = 0.0,
    fail_timeout: Annotated[
        float, typer.Option("--fail-timeout", help="Share that never answers in time.")
    ] = 0.0,
    fail_malformed: Annotated[
        float, typer.Option("--fail-malformed", help="Share answered with broken JSON.")
    ] = 0.0,
    retry_after: Annotated[
        float, typer.Option("--retry-after", help="Retry-After seconds on 429.")
    ] = 1.0,
) -> None:
    """Serve /v1/chat/completions from the deterministic mock model, with injected faults."""
    config = MockServerConfig(
        host=host,
        port=port,
        latency_ms=latency_ms,
        fail_429=fail_429,
        fail_500=fail_500,
        fail_timeout=fail_timeout,
        fail_malformed=fail_malformed,
        retry_after_s=retry_after,
    )
    console.print(f"mock OpenAI-compatible server on http://{host}:{port}/v1 (Ctrl-C stops)")
    run_mock_server(config)
