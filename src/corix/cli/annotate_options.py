"""`corix annotate`'s options, and the typed request they make.

Each option is an alias defined once, so the command's signature is one line a flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import typer
from pydantic import ValidationError

from corix.cli.common import fail, split_names
from corix.cli.run_cmd import executor_settings
from corix.config import validation_summary
from corix.errors import unknown_name

if TYPE_CHECKING:
    from corix.assessment.annotation_run import AnnotationRequest
    from corix.llm import EndpointConfig

AnnotatorOption = Annotated[
    str,
    typer.Option(help="reference (default), reference-harms, llm or llm-harms."),
]

PassesOption = Annotated[int, typer.Option(min=1, help="Independent passes per item.")]

RepeatsOption = Annotated[
    int, typer.Option(min=1, help="Runs per pass, for stability (LLM annotators).")
]

AdaptiveOption = Annotated[
    bool, typer.Option(help="Stop repeating an item once its answers are settled.")
]

MinRepeatsOption = Annotated[
    int, typer.Option(min=1, help="Runs every item gets before --adaptive may stop it.")
]

MaxFlipRateOption = Annotated[
    float,
    typer.Option(
        "--max-flip-rate",
        min=0.0,
        max=0.49,
        help="With --adaptive, also stop an item whose flip rate is at most this.",
    ),
]

MaxChangeOption = Annotated[
    float,
    typer.Option(
        min=0.001,
        max=0.49,
        help="With --adaptive, stop an item once the remaining runs would change its "
        "answer with at most this probability.",
    ),
]

JudgeNoiseOption = Annotated[
    float,
    typer.Option(
        min=0.01,
        max=0.99,
        help="With --adaptive, the share of random judge runs assumed when the pilot "
        "(200 sessions' first two runs) measures fewer than 30 pairs.",
    ),
]

CategoriesOption = Annotated[
    list[str] | None,
    typer.Option("--categories", help="Schema categories to ask (comma-separated)."),
]

HarmsOption = Annotated[
    list[str] | None, typer.Option("--harms", help="Harm packs to judge (comma-separated).")
]

EndpointOption = Annotated[
    str | None,
    typer.Option(
        help="'mock' (the offline mock model) or 'local:<gguf file or package>' "
        "(a model run in-process; the local extra)."
    ),
]

EndpointUrlOption = Annotated[
    str | None, typer.Option(help="Base URL of an OpenAI-compatible endpoint.")
]

ModelOption = Annotated[str | None, typer.Option(help="Model name at the endpoint.")]

KeyEnvOption = Annotated[
    str | None, typer.Option(help="Environment variable that holds the API key.")
]

ConcurrencyOption = Annotated[
    int, typer.Option(min=1, help="Sessions at once; the most calls at once.")
]

FixedConcurrencyOption = Annotated[
    bool,
    typer.Option(
        "--fixed-concurrency",
        help="Keep --concurrency calls at once instead of adapting to the endpoint.",
    ),
]

ContextWindowOption = Annotated[
    int | None,
    typer.Option(
        "--context-window",
        min=256,
        help="Tokens the model reads at most; longer dialogues are cut to fit.",
    ),
]

ProcessesOption = Annotated[
    int | None,
    typer.Option(
        "--processes",
        min=1,
        help="For --endpoint local:…, model processes answering side by side (each holds "
        "the model; a model runs on half the cores, two use them all).",
    ),
]

SeedOption = Annotated[int, typer.Option(help="Base seed; each pass and repeat derives its own.")]

MaxReasksOption = Annotated[
    int, typer.Option(min=0, help="Times an invalid answer is sent back to the model.")
]

TemperatureOption = Annotated[
    float | None, typer.Option(min=0, help="Sampling temperature of LLM annotators.")
]

RetryFailedOption = Annotated[
    bool, typer.Option(help="Ask again where this annotator's passes failed.")
]

CacheOption = Annotated[
    Path | None, typer.Option(help="SQLite file caching model replies across runs.")
]

TimeoutOption = Annotated[
    float | None, typer.Option("--timeout", min=0.1, help="Seconds to wait for one reply.")
]

MaxTokensOption = Annotated[
    int | None, typer.Option("--max-tokens", min=1, help="Longest reply asked for.")
]

StructuredOutputOption = Annotated[
    str | None,
    typer.Option(
        "--structured-output",
        help="auto (default: json_schema, stepping down when refused), json_schema, "
        "json_object or prompt.",
    ),
]

RpmOption = Annotated[
    float | None, typer.Option("--rpm", min=0.001, help="Requests per minute at most.")
]

RetryAfterMaxOption = Annotated[
    float | None,
    typer.Option(
        "--retry-after-max",
        min=0,
        help="Longest Retry-After honoured, in seconds (default 120); a longer one fails the call.",
    ),
]

CallDeadlineOption = Annotated[
    float | None,
    typer.Option(
        "--call-deadline", min=0.1, help="Seconds one call may take with all its retries."
    ),
]

KeyHeaderOption = Annotated[
    str | None,
    typer.Option("--key-header", help="Send the key in this header (Azure: api-key)."),
]

PricePromptOption = Annotated[
    float | None,
    typer.Option(
        "--price-prompt", min=0, help="Price per 1,000 prompt tokens (for per-cell cost)."
    ),
]

PriceCompletionOption = Annotated[
    float | None,
    typer.Option("--price-completion", min=0, help="Price per 1,000 completion tokens."),
]

AllowFailuresOption = Annotated[
    bool, typer.Option("--allow-failures", help="Exit 0 even when some passes failed.")
]

STRUCTURED_OUTPUT_MODES = ("auto", "json_schema", "json_object", "prompt")
# Flags that set a field of the judge's EndpointConfig: flag name → field name.
_ENDPOINT_FIELDS = {
    "timeout": "timeout_s",
    "max_tokens": "max_tokens",
    "structured_output": "structured_output",
    "rpm": "requests_per_minute",
    "retry_after_max": "retry_after_max_s",
    "call_deadline": "call_deadline_s",
    "key_header": "key_header",
    "context_window": "context_window",
    "processes": "processes",
    "price_prompt": "price_per_1k_prompt",
    "price_completion": "price_per_1k_completion",
}


def annotation_request(flags: Mapping[str, Any]) -> AnnotationRequest:
    """The request `corix annotate` was given, ``flags`` by parameter name; usage errors
    for flags that do not go together."""
    from corix.assessment.annotation_run import AnnotateOptions, AnnotationRequest

    mode = flags["structured_output"]
    if mode is not None and mode not in STRUCTURED_OUTPUT_MODES:
        raise unknown_name("--structured-output mode", mode, STRUCTURED_OUTPUT_MODES)
    settings: dict[str, object] = {field: flags[flag] for flag, field in _ENDPOINT_FIELDS.items()}
    settings["adaptive_concurrency"] = False if flags["fixed_concurrency"] else None
    given = (flags["endpoint"], flags["endpoint_url"], flags["model"], flags["key_env"])
    config = _endpoint(*given, flags["concurrency"], settings)
    spread = executor_settings(
        flags["executor"], flags["ray_address"], flags["ray_workers"], flags["db_pool"]
    )
    if spread.kind == "ray" and flags["cache"] is not None:
        raise fail("--cache is a file of this machine: it cannot be shared by Ray workers")
    if config is not None and not flags["annotator"].startswith("llm"):
        raise fail(f"the '{flags['annotator']}' annotator runs offline and takes no endpoint")
    asked = {field: flags[field] for field in AnnotateOptions.model_fields}
    names = {"categories": split_names(flags["categories"]), "harms": split_names(flags["harms"])}
    return AnnotationRequest(
        run_id=flags["run"],
        annotator=flags["annotator"],
        options=AnnotateOptions.model_validate(asked | names),
        endpoint=config,
        executor=spread,
        cache=flags["cache"],
    )


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
    try:
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
    except ValidationError as exc:  # flags that do not go together, e.g. --processes on a URL
        raise fail(f"the judge's endpoint is not valid: {validation_summary(exc)}") from None
