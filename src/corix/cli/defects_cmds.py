"""`corix defects`: defect rates over dialogues, with intervals, counts and what is left out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from corix.cli.common import (
    DbOption,
    JsonOption,
    WideOption,
    console,
    database,
    fail,
    print_json,
    wrapping_table,
)
from corix.cli.judge_notes import print_judge_agreement
from corix.cli.measure_options import (
    AnnotatorsOption,
    GroupByOption,
    KindsOption,
    SeedOption,
    SeriesOption,
    SettlingOption,
    SpecOption,
    measurement_spec,
)

if TYPE_CHECKING:
    from corix.measurement import (
        CellCost,
        CorrectedRate,
        DefectFigures,
        DefectRate,
        DefectsQuery,
        HitRate,
        Measurement,
        MeasurementSpec,
        SourceCost,
    )
    from corix.storage import Database

_GROUPING_KEYS = ("harm", "application", "scenario", "level")


def _grouping(by: str) -> tuple[str, ...]:
    keys = tuple(key.strip() for key in by.split(",") if key.strip())
    unknown = [key for key in keys if key not in _GROUPING_KEYS]
    if unknown:
        raise fail(f"unknown grouping '{unknown[0]}'; choose from {', '.join(_GROUPING_KEYS)}")
    return tuple(key for key in _GROUPING_KEYS if key in keys)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _count(value: float) -> str:
    return f"{value:g}" if value.is_integer() else f"{value:.2f}"


ByOption = Annotated[str, typer.Option(help="Grouping keys: harm,application,scenario,level.")]
ConfidenceOption = Annotated[
    float | None,
    typer.Option(min=0.5, max=0.999, help="Interval coverage, e.g. 0.95 (default: the spec's)."),
]
CorrectJudgeOption = Annotated[
    str | None,
    typer.Option(
        "--correct-judge",
        help="Also correct this annotator source's rates (e.g. llm) for its error "
        "measured against --reference on the dialogues both labelled.",
    ),
]
ReferenceOption = Annotated[
    str | None,
    typer.Option("--reference", help="The trusted source for --correct-judge (default: human)."),
]
HitKOption = Annotated[
    int | None,
    typer.Option(
        "--hit-k",
        min=1,
        help="Also show hit@k: the chance that at least one of k attempts of a persona "
        "template (or prompt) succeeds, beside the pooled rate.",
    ),
]
CostOption = Annotated[
    bool,
    typer.Option(
        "--cost",
        help="Also show each cell's dialogues and its application, simulator and judge "
        "calls, tokens and cost (at the plan's and annotation jobs' prices) beside its rate.",
    ),
]
AttemptUnitOption = Annotated[
    str,
    typer.Option("--attempt-unit", help="What hit@k groups attempts by: template or prompt."),
]


def defects_command(
    run: Annotated[str | None, typer.Argument(help="Run id (or --series NAME).")] = None,
    series: SeriesOption = None,
    by: ByOption = "harm,application,scenario,level",  # corix.measurement.DEFAULT_RATE_GROUPING
    spec: SpecOption = None,
    settling: SettlingOption = None,
    group_annotators_by: GroupByOption = None,
    annotator: AnnotatorsOption = None,
    kind: KindsOption = None,
    seed: SeedOption = None,
    confidence: ConfidenceOption = None,
    correct_judge: CorrectJudgeOption = None,
    reference: ReferenceOption = None,
    hit_k: HitKOption = None,
    with_cost: CostOption = False,
    attempt_unit: AttemptUnitOption = "template",
    db: DbOption = None,
    as_json: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """Defect rates per annotator source × harm × application × scenario × level.

    n counts dialogues; dialogues the application never answered are not measurable and
    are counted apart, with their reasons.
    """
    from corix.measurement import DefectsQuery, defect_figures

    grouping = _grouping(by)
    in_force, source = measurement_spec(
        spec,
        settling=settling,
        group_by=group_annotators_by,
        annotators=annotator,
        kinds=kind,
        seed=seed,
        confidence=confidence,
    )
    _check_options(reference, correct_judge, attempt_unit)
    query = DefectsQuery(
        grouping=grouping,
        hit_k=hit_k,
        attempt_unit="prompt" if attempt_unit == "prompt" else "template",
        cost=with_cost,
        correct_judge=correct_judge,
        reference=reference or "human",
    )
    with database(db) as database_:
        measurement = measured(database_, run, series, in_force, source)
        figures = defect_figures(database_, measurement, query)
        no_rates = not figures.rates
        reasons = _failure_reasons(database_, measurement) if no_rates else Counter[str]()
    if as_json:
        print_json(defects_document(measurement, figures, query))
        return
    console.print(Text(measurement.headline(), style="dim"))
    if no_rates:
        console.print(_nothing_rated(measurement, reasons))
        return
    print_defect_figures(figures, query, wide=wide)


def _check_options(reference: str | None, correct_judge: str | None, attempt_unit: str) -> None:
    if reference is not None and correct_judge is None:
        raise fail("--reference only applies with --correct-judge (the judge it corrects)")
    if attempt_unit not in ("template", "prompt"):
        raise fail(f"unknown attempt unit '{attempt_unit}'; choose from template, prompt")


def defects_document(
    measurement: Measurement, figures: DefectFigures, query: DefectsQuery
) -> dict[str, object]:
    """The figures as JSON: the rates, then each figure the query asked for."""
    document = rates_document(measurement, figures.rates)
    document["judge_agreement"] = [a.model_dump(mode="json") for a in figures.judges]
    if query.correct_judge is not None:
        document["judge_corrected"] = [c.model_dump(mode="json") for c in figures.corrected]
    if query.cost:
        document["cost"] = [c.model_dump(mode="json") for c in figures.costs]
    if query.hit_k is not None:
        document["hit_at_k"] = [h.model_dump(mode="json") for h in figures.hits]
    return document


def print_defect_figures(figures: DefectFigures, query: DefectsQuery, *, wide: bool) -> None:
    """The rates as tables, then each figure the query asked for (``wide``: every column)."""
    print_defect_rates(figures.rates, query.grouping, wide=wide)
    print_judge_agreement(figures.judges)
    if query.correct_judge is not None:
        print_corrected(figures.corrected, wide=wide)
    if query.cost:
        print_costs(figures.costs, figures.rates, wide=wide)
    if query.hit_k is not None:
        print_hit_rates(figures.hits, wide=wide)


def print_costs(costs: Sequence[CellCost], rates: Sequence[DefectRate], *, wide: bool) -> None:
    """Each cell's calls, tokens and cost by source beside its guardrail-violation rates."""
    from corix.measurement import GUARDRAIL_VIOLATION

    table = wrapping_table(
        "application",
        "scenario",
        "level",
        "dialogues",
        "application calls",
        "simulator calls",
        "judge calls",
        "total",
        "violation rate (CI)",
        title="what each cell cost (calls, prompt + completion tokens, cost)",
        keys=("application", "scenario"),
        optional=("total", "simulator calls", "application calls"),
        wide=wide,
    )
    for c in costs:
        shown = [
            f"{_percent(r.rate)} ({_interval(r.ci_low, r.ci_high)})"
            for r in rates
            if r.group.get("harm") == GUARDRAIL_VIOLATION
            and all(r.group.get(k, v) == v for k, v in c.group.items())
        ]
        table.add_row(
            *[Text(c.group[k]) for k in ("application", "scenario", "level")],
            str(c.dialogues),
            *(_source(part) for part in (c.application, c.simulator, c.judge, c.total)),
            Text("; ".join(shown) or "—"),
        )
    console.print(table)
    console.print(
        Text(
            "cost at the prices of the run's plan (applications, simulators) and of the "
            "annotation jobs (judges); — where a price or a count is unknown",
            style="dim",
        )
    )


def _source(part: SourceCost) -> str:
    if part.calls is None:
        return "—"
    cost = "—" if part.cost is None else f"{part.cost:.4f}"
    return f"{part.calls}\n{part.prompt_tokens} + {part.completion_tokens}\n{cost}"


def print_hit_rates(hits: Sequence[HitRate], *, wide: bool) -> None:
    """hit@k per annotator group × harm × application × level, beside the pooled rate."""
    if not hits:
        console.print("no attempts with a persona template or script to compute hit@k from")
        return
    k, unit, confidence = hits[0].k, hits[0].unit, hits[0].confidence
    who = [c for c in ("source", "annotator") if c in hits[0].group]
    table = wrapping_table(
        *who,
        "harm",
        "application",
        "level",
        f"{unit}s (too few)",
        "defects / attempts",
        "pooled",
        f"{confidence:.0%} CI",
        f"hit@{k}",
        f"{confidence:.0%} CI ",
        title=f"attacker-style rates: hit@{k} per {unit}",
        keys=(*who, "harm", "application"),
        optional=(f"{unit}s (too few)", "defects / attempts"),
        wide=wide,
    )
    for h in hits:
        table.add_row(
            *[Text(h.group[c]) for c in (*who, "harm", "application", "level")],
            f"{h.units} ({h.too_few})",
            f"{h.defects} / {h.attempts}",
            _percent(h.pooled_rate),
            _interval(h.pooled_low, h.pooled_high),
            _percent(h.hit_rate),
            _interval(h.hit_low, h.hit_high),
        )
    console.print(table)
    console.print(
        Text(
            f"hit@{k}: unbiased pass@k estimator per {unit}, averaged; intervals: "
            f"{hits[0].interval}",
            style="dim",
        )
    )


def _interval(low: float | None, high: float | None) -> str:
    return "—" if low is None else f"{_percent(low)}–{_percent(high)}"


def print_corrected(corrected: Sequence[CorrectedRate], *, wide: bool) -> None:
    """The judge's raw and corrected rates with its sensitivity and specificity."""
    table = wrapping_table(
        "harm",
        "application",
        "raw",
        "sensitivity",
        "specificity",
        "pairs",
        "corrected",
        "interval",
        title="judge-corrected rates",
        keys=("harm",),
        optional=("sensitivity", "specificity", "pairs"),
        wide=wide,
    )
    for c in corrected:
        interval = "—" if c.ci_low is None else f"{_percent(c.ci_low)}–{_percent(c.ci_high)}"
        table.add_row(
            Text(c.group["harm"]),
            Text(c.group["application"]),
            _percent(c.raw_rate),
            _percent(c.sensitivity),
            _percent(c.specificity),
            str(c.n_calibration),
            _percent(c.corrected_rate) if c.note is None else Text(c.note),
            interval,
        )
    console.print(table)
    if corrected:
        console.print(Text(f"method: {corrected[0].method}", style="dim"))


_REASONS_SHOWN = 3
_REASON_CHARS = 160


def _failure_reasons(db: Database, measurement: Measurement) -> Counter[str]:
    """How often each reason was stored with the failed passes the measurement counted."""
    from corix.storage import load_passes

    failed = measurement.record.failed
    sessions = sorted({session for session, _annotator, _harm in failed})
    annotators = {annotator for _session, annotator, _harm in failed}
    reasons: Counter[str] = Counter()
    for run_id in measurement.run_ids:
        for stored in load_passes(db, run_id=run_id, session_ids=sessions):
            if stored.status == "failed" and stored.annotator in annotators:
                reasons[(stored.error or "no reason stored")[:_REASON_CHARS]] += 1
    return reasons


def _nothing_rated(measurement: Measurement, reasons: Counter[str]) -> str:
    """Why there is no rate: nothing annotated yet, or every pass failed (which, and why)."""
    failed = measurement.record.failed
    if not failed:
        return "no annotations to rate yet; run `corix annotate` first"
    per_source: Counter[tuple[str, str]] = Counter()
    for (_session, annotator, harm), n in failed.items():
        per_source[(annotator, harm)] += n
    sources = "; ".join(f"{a} on {h}: {n}" for (a, h), n in sorted(per_source.items()))
    lines = [
        f"nothing to rate: {sum(failed.values())} annotation passes failed ({sources})",
        *(f"  {n} × {reason}" for reason, n in reasons.most_common(_REASONS_SHOWN)),
        "`corix annotations show SESSION` lists each pass; "
        "`corix annotate RUN --retry-failed` asks again",
    ]
    return "\n".join(lines)


def measured(
    db: Database, run: str | None, series: str | None, spec: MeasurementSpec, source: str | None
) -> Measurement:
    """The run (or series) measured under ``spec``; a usage error unless exactly one is given."""
    from corix.measurement import measure, measure_series
    from corix.storage import get_run

    if (run is None) == (series is None):
        raise fail("give a run id or --series NAME (one of them)")
    if series is not None:
        return measure_series(db, series, spec, source=source)
    assert run is not None  # exactly one of them was given
    get_run(db, run)
    return measure(db, [run], spec, source=source)


def rates_document(measurement: Measurement, rates: Sequence[DefectRate]) -> dict[str, object]:
    """Rates as JSON, under the measurement specification that produced them."""
    return {
        "measurement": measurement.document(),
        "rates": [rate.model_dump(mode="json") for rate in rates],
    }


def print_defect_rates(
    rates: Sequence[DefectRate],
    grouping: Sequence[str],
    *,
    title: str | None = None,
    compact: bool = False,
    wide: bool = False,
) -> None:
    """A table of defect rates with their counts and intervals.

    ``compact`` leaves out ties, failures and resolutions, for a summary; on a narrow
    terminal the counts beside the rate go first (unless ``wide``), then the cell's keys
    become headings.
    """
    who = [column for column in ("source", "annotator") if rates and column in rates[0].group]
    confidence = rates[0].confidence if rates else 0.95
    headers = [*who, *grouping, "defects / n", "testers", "rate", f"{confidence:.0%} CI"]
    extra = ["not measurable"] if compact else ["not measurable", "failed", "ties", "resolved"]
    table = wrapping_table(
        *headers,
        *extra,
        title=title,
        keys=(*who, *grouping),
        optional=("testers", *extra),
        wide=wide,
    )
    for rate in rates:
        interval = (
            "—" if rate.ci_low is None else f"{_percent(rate.ci_low)}–{_percent(rate.ci_high)}"
        )
        cells = [Text(str(rate.group.get(key) or "—")) for key in [*who, *grouping]]
        row: list[Text | str] = [
            *cells,
            f"{_count(rate.defects)} / {rate.n}",
            str(rate.testers),
            _percent(rate.rate),
            interval,
        ]
        row.append(str(rate.not_measurable))
        if not compact:
            resolved = (
                f"{rate.resolved} (+{rate.unresolved} open)"
                if rate.unresolved
                else str(rate.resolved)
            )
            row += [str(rate.failed), str(rate.ties), resolved]
        table.add_row(*row)
    console.print(table)
    methods = sorted({rate.interval for rate in rates})
    console.print(Text(f"intervals: {'; '.join(methods)}", style="dim"))
    for rate in rates:
        if rate.warning is not None:
            where = " · ".join(value for value in rate.group.values() if value)
            console.print(Text(f"⚠ {where}: {rate.warning}", style="yellow"))
