"""`corix annotate`: run automated annotators over a run's sessions."""

from __future__ import annotations

from contextlib import closing
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from corix.cli.annotate_options import (
    AdaptiveOption,
    AllowFailuresOption,
    AnnotatorOption,
    CacheOption,
    CallDeadlineOption,
    CategoriesOption,
    ConcurrencyOption,
    ContextWindowOption,
    EndpointOption,
    EndpointUrlOption,
    FixedConcurrencyOption,
    HarmsOption,
    JudgeNoiseOption,
    KeyEnvOption,
    KeyHeaderOption,
    MaxChangeOption,
    MaxFlipRateOption,
    MaxReasksOption,
    MaxTokensOption,
    MinRepeatsOption,
    ModelOption,
    PassesOption,
    PriceCompletionOption,
    PricePromptOption,
    ProcessesOption,
    RepeatsOption,
    RetryAfterMaxOption,
    RetryFailedOption,
    RpmOption,
    SeedOption,
    StructuredOutputOption,
    TemperatureOption,
    TimeoutOption,
    annotation_request,
)
from corix.cli.common import (
    DbOption,
    DbPoolOption,
    ExecutorOption,
    JsonOption,
    RayAddressOption,
    RayWorkersOption,
    RunArgument,
    WideOption,
    console,
    database,
    err_console,
    fail,
    print_json,
    wrapping_table,
)
from corix.cli.exit_codes import ExitCode
from corix.cli.progress import progress_for

if TYPE_CHECKING:
    from corix.assessment.annotation_run import AnnotationRequest, AnnotationSummary


def annotate_command(
    ctx: typer.Context,
    run: RunArgument,
    annotator: AnnotatorOption = "reference",
    passes: PassesOption = 1,
    repeats: RepeatsOption = 1,
    adaptive: AdaptiveOption = False,
    min_repeats: MinRepeatsOption = 2,
    max_flip_rate: MaxFlipRateOption = 0.0,
    max_change: MaxChangeOption = 0.07,
    judge_noise: JudgeNoiseOption = 0.4,
    categories: CategoriesOption = None,
    harms: HarmsOption = None,
    endpoint: EndpointOption = None,
    endpoint_url: EndpointUrlOption = None,
    model: ModelOption = None,
    key_env: KeyEnvOption = None,
    concurrency: ConcurrencyOption = 16,
    fixed_concurrency: FixedConcurrencyOption = False,
    context_window: ContextWindowOption = None,
    processes: ProcessesOption = None,
    seed: SeedOption = 0,
    max_reasks: MaxReasksOption = 2,
    temperature: TemperatureOption = None,
    retry_failed: RetryFailedOption = False,
    cache: CacheOption = None,
    timeout: TimeoutOption = None,
    max_tokens: MaxTokensOption = None,
    structured_output: StructuredOutputOption = None,
    rpm: RpmOption = None,
    retry_after_max: RetryAfterMaxOption = None,
    call_deadline: CallDeadlineOption = None,
    key_header: KeyHeaderOption = None,
    price_prompt: PricePromptOption = None,
    price_completion: PriceCompletionOption = None,
    allow_failures: AllowFailuresOption = False,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    ray_workers: RayWorkersOption = None,
    db_pool: DbPoolOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """Annotate a run's sessions; what is already stored is skipped.

    Exits 3 when some passes failed (stored with their reason; --retry-failed asks
    again), unless --allow-failures."""
    request = annotation_request(ctx.params)  # every flag above, by parameter name
    summary = _annotated(db, request, quiet=as_json)
    if as_json:
        print_json(summary.model_dump(mode="json"))
    else:
        _print_summary(summary, wide=wide)
    if summary.passes_failed and not allow_failures:
        raise typer.Exit(ExitCode.FAILURES)


def _annotated(db: str | None, request: AnnotationRequest, *, quiet: bool) -> AnnotationSummary:
    """Annotate with progress on a terminal; a run taken over meanwhile exits 8."""
    from corix.assessment.annotation_run import ProgressHooks, annotate
    from corix.storage import LeaseLost

    tracker = progress_for("sessions", quiet=quiet)
    hooks = ProgressHooks(on_planned=tracker.planned, on_session_done=tracker.advance)
    try:
        with database(db) as database_, closing(tracker):
            return annotate(database_, request, hooks)
    except LeaseLost as exc:
        raise fail(str(exc), ExitCode.TAKEN_OVER) from None
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: exits 130
        err_console.print(
            "interrupted: the passes stored so far are kept; the same command adds the rest",
            highlight=False,
            soft_wrap=True,
        )
        raise


def _print_summary(summary: AnnotationSummary, *, wide: bool) -> None:
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
        optional=("gated out", "already stored", "not applicable"),
        wide=wide,
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
    if summary.judge_noise is not None:
        saved = sum(counts.repeats_saved for counts in summary.by_target.values())
        console.print(
            f"adaptive repeats: {saved} saved, at a judge noise of {summary.judge_noise:.3f}"
        )
    if summary.model_calls:
        console.print(
            f"model calls: {summary.model_calls}, tokens: {summary.prompt_tokens} prompt + "
            f"{summary.completion_tokens} completion"
        )
