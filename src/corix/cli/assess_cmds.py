"""`corix annotate`, `corix annotations show | import`, `corix defects`, `corix agreement`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Column, Table
from rich.text import Text

from corix.assessment.agreement import AgreementReport, compare, compare_per_question, read_labels
from corix.assessment.defects import DEFAULT_GROUPING, DefectRate, GroupKey, IntervalMethod
from corix.assessment.importing import import_labels
from corix.assessment.run_results import compute_defect_rates, run_agreement
from corix.assessment.runner import (
    AnnotateOptions,
    AnnotationSummary,
    ProgressHooks,
    annotate_run,
)
from corix.cli.common import DbOption, JsonOption, console, database, fail, print_json
from corix.llm import EndpointConfig, ResponseCache
from corix.llm.mock_model import MOCK_MODEL_NAME
from corix.storage import Repository
from corix.storage.annotations import StoredPass, load_consensus, load_passes

annotations_app = typer.Typer(help="Inspect and import annotations.", no_args_is_help=True)

RunArgument = Annotated[str, typer.Argument(help="Run id.")]


def _table(*headers: str, title: str | None = None) -> Table:
    """A table whose cells wrap rather than cut: ids and names must stay readable whole."""
    columns = [Column(header=Text(header), overflow="fold") for header in headers]
    return Table(*columns, title=title, title_justify="left")


def _names(values: Sequence[str] | None) -> tuple[str, ...] | None:
    """Names given as repeated options and/or comma-separated lists."""
    if not values:
        return None
    return tuple(name.strip() for value in values for name in value.split(",") if name.strip())


def _endpoint(
    endpoint: str | None,
    url: str | None,
    model: str | None,
    key_env: str | None,
    concurrency: int,
) -> EndpointConfig | None:
    if endpoint is not None and url is not None:
        raise fail("give either --endpoint mock or --endpoint-url, not both")
    if endpoint is not None:
        if endpoint != "mock":
            raise fail(f"unknown endpoint '{endpoint}'; the only built-in one is 'mock'")
        return EndpointConfig(
            name="mock",
            transport="mock",
            model=model or MOCK_MODEL_NAME,
            max_concurrency=concurrency,
        )
    if url is None:
        return None
    if model is None:
        raise fail("--endpoint-url needs --model")
    return EndpointConfig(
        name="annotator",
        base_url=url,
        model=model,
        api_key_env=key_env,
        max_concurrency=concurrency,
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
    categories: Annotated[
        list[str] | None,
        typer.Option("--categories", help="Schema categories to ask (comma-separated)."),
    ] = None,
    harms: Annotated[
        list[str] | None, typer.Option("--harms", help="Harm packs to judge (comma-separated).")
    ] = None,
    endpoint: Annotated[
        str | None, typer.Option(help="'mock' for the built-in offline mock model.")
    ] = None,
    endpoint_url: Annotated[
        str | None, typer.Option(help="Base URL of an OpenAI-compatible endpoint.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name at the endpoint.")] = None,
    key_env: Annotated[
        str | None, typer.Option(help="Environment variable that holds the API key.")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Sessions (and calls) at once.")] = 16,
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
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Annotate a run's sessions; what is already stored is skipped."""
    config = _endpoint(endpoint, endpoint_url, model, key_env, concurrency)
    if config is not None and not annotator.startswith("llm"):
        raise fail(f"the '{annotator}' annotator runs offline and takes no endpoint")
    options = AnnotateOptions(
        passes=passes,
        repeats=repeats,
        adaptive=adaptive,
        min_repeats=min_repeats,
        categories=_names(categories),
        harms=_names(harms),
        concurrency=concurrency,
        seed=seed,
        retry_failed=retry_failed,
        max_reasks=max_reasks,
        temperature=temperature,
    )
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=as_json,
    )
    task = progress.add_task("sessions", start=False)

    def planned(total: int) -> None:
        progress.update(task, total=total)
        progress.start_task(task)
        progress.start()

    with database(db) as database_:
        response_cache = ResponseCache(cache) if cache is not None else None
        try:
            summary = annotate_run(
                database_,
                run,
                annotator,
                options=options,
                endpoint=config,
                cache=response_cache,
                progress=ProgressHooks(
                    on_planned=planned, on_session_done=lambda: progress.advance(task)
                ),
            )
        finally:
            if progress.live.is_started:
                progress.stop()
            if response_cache is not None:
                response_cache.close()
    if as_json:
        print_json(summary.model_dump(mode="json"))
        return
    _print_summary(summary)


def _print_summary(summary: AnnotationSummary) -> None:
    console.print(
        Text(
            f"{summary.annotator} → passes stored as '{summary.stored_as}' on "
            f"{summary.sessions} sessions of {summary.run_id} in {summary.wall_s:.2f} s"
        )
    )
    table = _table("target", "stored", "failed", "already stored", "not applicable", "gated out")
    for target, counts in summary.by_target.items():
        table.add_row(
            Text(target),
            str(counts.stored),
            str(counts.failed),
            str(counts.already_stored),
            str(counts.not_applicable),
            str(counts.gated_out),
        )
    console.print(table)
    if summary.consensus_rows:
        console.print(f"consensus rows stored: {summary.consensus_rows}")
    if summary.model_calls:
        console.print(
            f"model calls: {summary.model_calls}, tokens: {summary.prompt_tokens} prompt + "
            f"{summary.completion_tokens} completion"
        )


# --- annotations show / import -----------------------------------------------------------------


def _pass_label(stored: StoredPass) -> Text:
    label = f"{stored.annotator} ({stored.annotator_kind}) pass {stored.pass_no}"
    if stored.repeat_no:
        label += f" run {stored.repeat_no}"
    return Text(label)


def _shown(value: str | float | None) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else value


def _answers_table(
    title: str, passes: list[StoredPass], turn: int | None, *, with_category: bool
) -> Table | None:
    table = _table(
        "annotator",
        *(("category",) if with_category else ()),
        "question",
        "value",
        "reasoning",
        title=title,
    )
    rows = 0
    for stored in passes:
        category = (Text(stored.category),) if with_category else ()
        if not stored.ok and turn is None:
            table.add_row(
                _pass_label(stored), *category, Text("—"), Text("failed"), Text(stored.error or "")
            )
            rows += 1
            continue
        for answer in stored.answers:
            if answer.turn_index != turn:
                continue
            table.add_row(
                _pass_label(stored),
                *category,
                Text(answer.question_id),
                Text(_shown(answer.value)),
                Text(answer.reasoning or ""),
            )
            rows += 1
    return table if rows else None


@annotations_app.command("show")
def annotations_show(
    session: Annotated[str, typer.Argument(help="Session id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Each turn with its annotations beside it, pass by pass, then the dialogue-level ones."""
    with database(db) as database_:
        record = Repository(database_).load_session(session)
        passes = load_passes(database_, session_ids=[session])
        consensus_rows = load_consensus(database_, session_ids=[session])
    if as_json:
        print_json(
            {
                "session": record.model_dump(mode="json"),
                "passes": [{**vars(p), "answers": [vars(a) for a in p.answers]} for p in passes],
                "consensus": [vars(row) for row in consensus_rows],
            }
        )
        return
    console.print(
        Text(f"session {record.id} — {record.application}, {record.scenario}, {record.level}")
    )
    for position, turn in enumerate(record.turns):
        console.rule(f"turn {position}")
        console.print(Text("user: ", style="bold") + Text(turn.user_text))
        reply = turn.response_text if turn.error is None else f"[failed] {turn.error}"
        console.print(Text("application: ", style="bold") + Text(reply or ""))
        table = _answers_table("", passes, position, with_category=True)
        if table is not None:
            console.print(table)
    console.rule("dialogue")
    by_category: defaultdict[str, list[StoredPass]] = defaultdict(list)
    for stored in passes:
        by_category[stored.category].append(stored)
    for category, category_passes in sorted(by_category.items()):
        table = _answers_table(category, category_passes, None, with_category=False)
        if table is not None:
            console.print(table)
    if not passes:
        console.print("no annotations yet")
    if consensus_rows:
        table = _table(
            "annotator",
            "category",
            "question",
            "turn",
            "consensus",
            "method",
            "runs",
            "flip rate",
            title="consensus of repeated runs",
        )
        for row in consensus_rows:
            table.add_row(
                Text(row.annotator),
                Text(row.category),
                Text(row.question_id),
                "" if row.turn_index is None else str(row.turn_index),
                Text(str(row.value)),
                row.method,
                str(row.n_runs),
                f"{row.flip_rate:.2f}",
            )
        console.print(table)


@annotations_app.command("import")
def annotations_import(
    run: RunArgument,
    labels: Annotated[Path, typer.Argument(help="CSV or JSONL file of human labels.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import human labels as passes (all checked first; stored in one transaction)."""
    with database(db) as database_:
        summary = import_labels(database_, run, labels)
    if as_json:
        print_json(summary.model_dump(mode="json"))
        return
    console.print(
        Text(
            f"imported {summary.passes} passes ({summary.answers} answers) by "
            f"{', '.join(summary.annotators) or 'nobody'} into {summary.run_id}"
        )
    )


# --- defects -----------------------------------------------------------------------------------


def _grouping(by: str) -> tuple[GroupKey, ...]:
    keys = tuple(key.strip() for key in by.split(",") if key.strip())
    unknown = [key for key in keys if key not in DEFAULT_GROUPING]
    if unknown:
        raise fail(f"unknown grouping '{unknown[0]}'; choose from {', '.join(DEFAULT_GROUPING)}")
    return tuple(key for key in DEFAULT_GROUPING if key in keys)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def defects_command(
    run: RunArgument,
    annotator: Annotated[
        str | None, typer.Option(help="Only this annotator (as stored, e.g. llm:gpt-4o).")
    ] = None,
    by: Annotated[
        str, typer.Option(help="Grouping keys: application,scenario,harm,level.")
    ] = ",".join(DEFAULT_GROUPING),
    method: Annotated[IntervalMethod, typer.Option(help="Confidence interval.")] = (
        IntervalMethod.WILSON
    ),
    confidence: Annotated[float, typer.Option(min=0.5, max=0.999)] = 0.95,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Defect rates per annotator × application × scenario × harm × level, with counts."""
    grouping = _grouping(by)
    with database(db) as database_:
        Repository(database_).get_run(run)
        rates = compute_defect_rates(
            database_,
            run,
            annotator=annotator,
            by=grouping,
            method=method,
            confidence=confidence,
        )
    if as_json:
        print_json([rate.model_dump(mode="json") for rate in rates])
        return
    if not rates:
        console.print("no annotations to rate yet; run `corix annotate` first")
        return
    print_defect_rates(rates, grouping, confidence=confidence, method=method)


def print_defect_rates(
    rates: Sequence[DefectRate],
    grouping: Sequence[str],
    *,
    confidence: float = 0.95,
    method: IntervalMethod = IntervalMethod.WILSON,
    title: str | None = None,
    compact: bool = False,
) -> None:
    """A table of defect rates with their counts and intervals.

    ``compact`` leaves out the annotator, missing counts and value source, for a summary.
    """
    interval_header = f"{confidence:.0%} CI ({method})"
    if compact:
        table = _table(*grouping, "defects / n", "rate", interval_header, title=title)
    else:
        table = _table(
            "annotator",
            *grouping,
            "defects",
            "n",
            "missing",
            "rate",
            interval_header,
            "values from",
            title=title,
        )
    for rate in rates:
        interval = (
            "—" if rate.ci_low is None else f"{_percent(rate.ci_low)}–{_percent(rate.ci_high)}"
        )
        groups = [Text(str(rate.group.get(key) or "—")) for key in grouping]
        if compact:
            table.add_row(*groups, f"{rate.defects} / {rate.n}", _percent(rate.rate), interval)
            continue
        table.add_row(
            Text(str(rate.group["annotator"])),
            *groups,
            str(rate.defects),
            str(rate.n),
            str(rate.n_missing),
            _percent(rate.rate),
            interval,
            Text(str(rate.group["value_from"])),
        )
    console.print(table)


# --- agreement ---------------------------------------------------------------------------------


def _groups(values: Sequence[str] | None) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for value in values or ():
        name, sep, members = value.partition("=")
        listed = [m.strip() for m in members.split(",") if m.strip()]
        if not sep or not name.strip() or not listed:
            raise fail(f"--group expects NAME=annotator,annotator…, got '{value}'")
        groups[name.strip()] = listed
    return groups


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def agreement_command(
    labels: Annotated[
        Path | None,
        typer.Argument(help="CSV/JSONL of item_id,annotator,value[,question_id]."),
    ] = None,
    a: Annotated[str, typer.Option("--a", help="One side: an annotator or a group.")] = "",
    b: Annotated[str, typer.Option("--b", help="The other side.")] = "",
    run: Annotated[
        str | None, typer.Option(help="Compare a run's stored annotations instead of a file.")
    ] = None,
    question: Annotated[
        str | None, typer.Option(help="Only this question (harm severities: harm:<pack>).")
    ] = None,
    group: Annotated[
        list[str] | None,
        typer.Option("--group", help="NAME=annotator,annotator… (repeatable)."),
    ] = None,
    ordinal: Annotated[
        bool, typer.Option(help="File labels are ordered numbers (±1 ratio, weighted κ).")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Agreement between two annotators or groups: exact/±1 ratio, confusion, κ, α."""
    if not a or not b:
        raise fail("give both sides: --a NAME --b NAME")
    if (labels is None) == (run is None):
        raise fail("give either a LABELS file or --run RUN")
    groups = _groups(group)
    if labels is not None:
        rows = read_labels(labels)
        if question is not None:
            rows = [row for row in rows if row.question_id == question]
        if any(row.question_id for row in rows):
            ordinal_questions = {row.question_id for row in rows if ordinal and row.question_id}
            reports = compare_per_question(
                rows, a, b, groups=groups, ordinal_questions=ordinal_questions
            )
        else:
            reports = [compare(rows, a, b, groups=groups, ordinal=ordinal)]
    else:
        with database(db) as database_:
            Repository(database_).get_run(str(run))
            reports = run_agreement(database_, str(run), a, b, groups=groups, question=question)
    if as_json:
        print_json([report.model_dump(mode="json") for report in reports])
        return
    _print_agreement(reports)


def _print_agreement(reports: list[AgreementReport]) -> None:
    table = _table(
        "question",
        "items",
        "only a",
        "only b",
        "exact",
        "±1",
        "κ",
        "κ quadratic",
        "α nominal",
        "α ordinal",
    )
    for report in reports:
        table.add_row(
            Text(report.question_id or "—"),
            str(report.n_items),
            str(report.n_only_a),
            str(report.n_only_b),
            _score(report.exact_agreement),
            _score(report.relaxed_agreement),
            _score(report.cohen_kappa),
            _score(report.cohen_kappa_quadratic),
            _score(report.alpha_nominal),
            _score(report.alpha_ordinal),
        )
    console.print(table)
    if len(reports) == 1 and reports[0].labels:
        report = reports[0]
        headers = [f"{report.a} ↓ / {report.b} →", *(str(label) for label in report.labels)]
        matrix = _table(*headers, title="confusion matrix")
        for label, counts in zip(report.labels, report.confusion, strict=True):
            matrix.add_row(Text(str(label)), *(str(count) for count in counts))
        console.print(matrix)
