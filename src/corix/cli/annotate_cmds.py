"""`corix annotate`: run automated annotators over a run's sessions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit

import typer
from rich.text import Text

from corix.cli.common import (
    DbOption,
    DbPoolOption,
    ExecutorOption,
    JsonOption,
    RayAddressOption,
    RayWorkersOption,
    RunArgument,
    console,
    database,
    fail,
    print_json,
    split_names,
    wrapping_table,
)
from corix.cli.exit_codes import ExitCode
from corix.cli.progress import progress_for
from corix.cli.run_cmd import executor_settings
from corix.errors import unknown_name

if TYPE_CHECKING:
    from corix.assessment.annotation_run import AnnotationSummary
    from corix.llm import EndpointConfig


def _endpoint(
    endpoint: str | None,
    url: str | None,
    model: str | None,
    key_env: str | None,
    concurrency: int,
    settings: dict[str, object],
) -> EndpointConfig | None:
    """The judge's endpoint; ``settings`` are further EndpointConfig fields given as flags."""
    from corix.llm import LOCAL_PREFIX, MOCK_BASE_URL, MOCK_MODEL_NAME, EndpointConfig

    if endpoint is not None and url is not None:
        raise fail("give either --endpoint or --endpoint-url, not both")
    if endpoint is not None:
        if "?" in endpoint:  # a spec's query options are not read here: each is a flag
            raise fail(
                f"--endpoint '{endpoint}' takes no options after '?': give them as flags "
                "(--timeout, --max-tokens, --context-window, --rpm, …)"
            )
        if endpoint != MOCK_BASE_URL and not endpoint.startswith(LOCAL_PREFIX):
            raise fail(
                f"unknown endpoint '{endpoint}': 'mock' (the offline mock model) or "
                "'local:<gguf file or package>'"
            )
        base_url, name = endpoint, "mock" if endpoint == MOCK_BASE_URL else "annotator"
        default_model = (
            MOCK_MODEL_NAME if endpoint == MOCK_BASE_URL else endpoint.removeprefix(LOCAL_PREFIX)
        )
    elif url is not None:
        if model is None:
            raise fail("--endpoint-url needs --model")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise fail(f"--endpoint-url '{url}' is not an http(s) URL, e.g. http://host:8000/v1")
        base_url, default_model, name = url, model, "annotator"
    else:
        return None
    return EndpointConfig.model_validate(
        {
            "name": name,
            "base_url": base_url,
            "model": model or default_model,
            "key_env": key_env,
            "max_concurrency": concurrency,
            **{field: value for field, value in settings.items() if value is not None},
        }
    )


def annotate_command(
    run: RunArgument,
    annotator: Annotated[
        str,
        typer.Option(help="reference (default), reference-harms, llm or llm-harms."),
    ] = "reference",
    passes: Annotated[int, typer.Option(min=1, help="Independent passes per item.")] = 1,
    repeats: Annotated[
        int, typer.Option(min=1, help="Runs per pass, for stability (LLM annotators).")
    ] = 1,
    adaptive: Annotated[
        bool, typer.Option(help="Stop repeating an item once its answers are settled.")
    ] = False,
    min_repeats: Annotated[
        int, typer.Option(min=1, help="Runs every item gets before --adaptive may stop it.")
    ] = 2,
    max_flip_rate: Annotated[
        float,
        typer.Option(
            "--max-flip-rate",
            min=0.0,
            max=0.49,
            help="With --adaptive, also stop an item whose flip rate is at most this.",
        ),
    ] = 0.0,
    max_change: Annotated[
        float,
        typer.Option(
            min=0.001,
            max=0.49,
            help="With --adaptive, stop an item once the remaining runs would change its "
            "answer with at most this probability.",
        ),
    ] = 0.07,
    judge_noise: Annotated[
        float,
        typer.Option(
            min=0.01,
            max=0.99,
            help="With --adaptive, the share of random judge runs assumed until 30 items "
            "have measured it.",
        ),
    ] = 0.4,
    categories: Annotated[
        list[str] | None,
        typer.Option("--categories", help="Schema categories to ask (comma-separated)."),
    ] = None,
    harms: Annotated[
        list[str] | None, typer.Option("--harms", help="Harm packs to judge (comma-separated).")
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(
            help="'mock' (the offline mock model) or 'local:<gguf file or package>' "
            "(a model run in-process; the local extra)."
        ),
    ] = None,
    endpoint_url: Annotated[
        str | None, typer.Option(help="Base URL of an OpenAI-compatible endpoint.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name at the endpoint.")] = None,
    key_env: Annotated[
        str | None, typer.Option(help="Environment variable that holds the API key.")
    ] = None,
    concurrency: Annotated[
        int, typer.Option(min=1, help="Sessions at once; the most calls at once.")
    ] = 16,
    fixed_concurrency: Annotated[
        bool,
        typer.Option(
            "--fixed-concurrency",
            help="Keep --concurrency calls at once instead of adapting to the endpoint.",
        ),
    ] = False,
    context_window: Annotated[
        int | None,
        typer.Option(
            "--context-window",
            min=256,
            help="Tokens the model reads at most; longer dialogues are cut to fit.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Base seed; each pass and repeat derives its own.")] = 0,
    max_reasks: Annotated[
        int, typer.Option(min=0, help="Times an invalid answer is sent back to the model.")
    ] = 2,
    temperature: Annotated[
        float | None, typer.Option(min=0, help="Sampling temperature of LLM annotators.")
    ] = None,
    retry_failed: Annotated[
        bool, typer.Option(help="Ask again where this annotator's passes failed.")
    ] = False,
    cache: Annotated[
        Path | None, typer.Option(help="SQLite file caching model replies across runs.")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", min=0.1, help="Seconds to wait for one reply.")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", min=1, help="Longest reply asked for.")
    ] = None,
    structured_output: Annotated[
        str | None,
        typer.Option(
            "--structured-output",
            help="auto (default: json_schema, stepping down when refused), json_schema, "
            "json_object or prompt.",
        ),
    ] = None,
    rpm: Annotated[
        float | None, typer.Option("--rpm", min=0.001, help="Requests per minute at most.")
    ] = None,
    retry_after_max: Annotated[
        float | None,
        typer.Option(
            "--retry-after-max",
            min=0,
            help="Longest Retry-After honoured, in seconds (default 120); a longer one fails "
            "the call.",
        ),
    ] = None,
    call_deadline: Annotated[
        float | None,
        typer.Option(
            "--call-deadline", min=0.1, help="Seconds one call may take with all its retries."
        ),
    ] = None,
    key_header: Annotated[
        str | None,
        typer.Option("--key-header", help="Send the key in this header (Azure: api-key)."),
    ] = None,
    price_prompt: Annotated[
        float | None,
        typer.Option(
            "--price-prompt", min=0, help="Price per 1,000 prompt tokens (for per-cell cost)."
        ),
    ] = None,
    price_completion: Annotated[
        float | None,
        typer.Option("--price-completion", min=0, help="Price per 1,000 completion tokens."),
    ] = None,
    allow_failures: Annotated[
        bool, typer.Option("--allow-failures", help="Exit 0 even when some passes failed.")
    ] = False,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    ray_workers: RayWorkersOption = None,
    db_pool: DbPoolOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Annotate a run's sessions; what is already stored is skipped.

    Exits 3 when some passes failed (they are stored with their reason, and
    --retry-failed asks again), unless --allow-failures.
    """
    from corix.assessment.annotation_run import AnnotateOptions, ProgressHooks, annotate_run
    from corix.llm import ResponseCache

    modes = ("auto", "json_schema", "json_object", "prompt")
    if structured_output is not None and structured_output not in modes:
        raise unknown_name("--structured-output mode", structured_output, modes)
    settings: dict[str, object] = {
        "timeout_s": timeout,
        "max_tokens": max_tokens,
        "structured_output": structured_output,
        "requests_per_minute": rpm,
        "retry_after_max_s": retry_after_max,
        "call_deadline_s": call_deadline,
        "key_header": key_header,
        "context_window": context_window,
        "adaptive_concurrency": False if fixed_concurrency else None,
        "price_per_1k_prompt": price_prompt,
        "price_per_1k_completion": price_completion,
    }
    config = _endpoint(endpoint, endpoint_url, model, key_env, concurrency, settings)
    spread = executor_settings(executor, ray_address, ray_workers, db_pool)
    if spread.kind == "ray" and cache is not None:
        raise fail("--cache is a file of this machine: it cannot be shared by Ray workers")
    if config is not None and not annotator.startswith("llm"):
        raise fail(f"the '{annotator}' annotator runs offline and takes no endpoint")
    options = AnnotateOptions(
        passes=passes,
        repeats=repeats,
        adaptive=adaptive,
        min_repeats=min_repeats,
        max_flip_rate=max_flip_rate,
        max_change=max_change,
        judge_noise=judge_noise,
        categories=split_names(categories),
        harms=split_names(harms),
        concurrency=concurrency,
        seed=seed,
        retry_failed=retry_failed,
        max_reasks=max_reasks,
        temperature=temperature,
    )
    tracker = progress_for(console, "sessions", quiet=as_json)
    with database(db) as database_:
        response_cache = ResponseCache(cache) if cache is not None else None
        hooks = ProgressHooks(on_planned=tracker.planned, on_session_done=tracker.advance)
        try:
            if spread.kind == "ray":
                from corix.assessment.annotation_run.on_ray import annotate_run_on_ray

                summary = annotate_run_on_ray(
                    database_,
                    run,
                    annotator,
                    options=options,
                    endpoint=config,
                    settings=spread,
                    progress=hooks,
                )
            else:
                summary = annotate_run(
                    database_,
                    run,
                    annotator,
                    options=options,
                    endpoint=config,
                    cache=response_cache,
                    progress=hooks,
                )
        finally:
            tracker.close()
            if response_cache is not None:
                response_cache.close()
    if as_json:
        print_json(summary.model_dump(mode="json"))
    else:
        _print_summary(summary)
    if summary.passes_failed and not allow_failures:
        raise typer.Exit(ExitCode.FAILURES)


def _print_summary(summary: AnnotationSummary) -> None:
    console.print(
        Text(
            f"{summary.annotator} → passes stored as '{summary.stored_as}' on "
            f"{summary.sessions} sessions of {summary.run_id} in {summary.wall_s:.2f} s"
        )
    )
    table = wrapping_table(
        "target",
        "stored",
        "failed",
        "already stored",
        "not applicable",
        "gated out",
        "reply cut",
        "dialogue cut to fit",
    )
    for target, counts in summary.by_target.items():
        table.add_row(
            Text(target),
            str(counts.stored),
            str(counts.failed),
            str(counts.already_stored),
            str(counts.not_applicable),
            str(counts.gated_out),
            str(counts.cut_replies),
            str(counts.cut_dialogues),
        )
    console.print(table)
    if summary.consensus_rows:
        console.print(f"consensus rows stored: {summary.consensus_rows}")
    if summary.model_calls:
        console.print(
            f"model calls: {summary.model_calls}, tokens: {summary.prompt_tokens} prompt + "
            f"{summary.completion_tokens} completion"
        )
