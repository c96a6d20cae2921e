"""The report as Markdown: the numbers and how to read them, for a pull request or a wiki.

Transcripts stay in the HTML report. Every name taken from the record is escaped, so
that it prints as text and cannot break a table or become a link.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from corix.measurement import (
    GUARDRAIL_VIOLATION,
    CorrectedRate,
    DefectRate,
    HitRate,
    NodeResult,
    SequentialRecord,
)
from corix.report.content import ReportContent, TreeSection
from corix.report.formatting import (
    COST_COLUMNS,
    COST_NOTE,
    EMPTY,
    cost_parts,
    interval,
    node_notes,
    number,
    p_value,
    percent,
    percent_interval,
    signed,
    source_usage,
    words,
)
from corix.report.labels import (
    CORRECTED_NOTE,
    annotator_label,
    item_label,
    node_label,
    question_texts,
)
from corix.report.provenance import endpoint_text, repeats_text, targets_text
from corix.report.simulation_section import simulation_markdown
from corix.report.written import settings_line

# Enough to keep text from becoming emphasis, code, links, HTML or table cells.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")


def md(text: object) -> str:
    """Escape Markdown syntax (and table pipes); line breaks become spaces."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def render_markdown(content: ReportContent) -> str:
    run = content.run
    lines = [
        f"# CoRIx report · {md(run.name or run.id)}",
        "",
        f"Run `{run.id}` · status {md(run.status)} · started "
        f"{run.created_at:%Y-%m-%d %H:%M} UTC · {len(content.sessions.entries)} sessions · "
        f"applications: {', '.join(md(a) for a in content.applications)}",
        "",
        md(content.measurement.headline(annotator_label)),
        "",
        *([md(settings_line(content.written)), ""] if content.written else []),
        md(content.settlement.text(annotator_label)),
        "",
        f"Not measurable (no application reply, left out of every rate): "
        f"{len(content.not_measurable)} dialogues.",
        "",
        f"Replies cut at the model's token limit (finish reason `length`): "
        f"{content.sessions.cut_turns}.",
        "",
        *_how_to_read(content),
    ]
    questions = question_texts(content.schema, content.harm_packs)
    for section in content.trees:
        lines += _tree_section(section, questions)
    lines += _rates_section(content)
    if content.simulation_gap is not None:
        lines += simulation_markdown(content.simulation_gap, md, _table)
    lines += _views_section(content, questions)
    lines += _questionnaire_section(content)
    lines += _agreement_section(content, questions)
    lines += [
        "",
        "Transcripts, with annotations beside each turn, are in the HTML report.",
        "",
    ]
    return "\n".join(lines)


def _how_to_read(content: ReportContent) -> list[str]:
    settings = content.settings
    lines = [
        "## How to read this",
        "",
        "- Values are relative measurements: they compare applications tested the same way.",
        "- Each CoRIx tree is scored per application; higher means more risk.",
        f"- Intervals: {settings.confidence:.0%} bootstrap over dialogues "
        f"({settings.bootstrap} replicates, seed {settings.seed}); "
        "rates: continuity-corrected Wilson intervals.",
        "- 0% defects is not zero risk: the interval shows how high the rate could still be.",
        f"- {EMPTY} marks an empty node (no evidence); it is never counted as 0.",
        "",
    ]
    if content.annotators:
        lines += _table(
            ["Annotator", "Kind", "Version", "Guidelines", "Model", "Passes", "Failed"],
            [
                [
                    md(annotator_label(a.annotator)),
                    md(annotator_label(a.kind)),
                    md(a.version or EMPTY),
                    md(a.guideline_version or EMPTY),
                    md(a.model or EMPTY),
                    str(a.passes),
                    str(a.failed),
                ]
                for a in content.annotators
            ],
        )
    else:
        lines += ["No annotation passes are stored for this run.", ""]
    if content.annotation_jobs:
        lines += _table(
            ["Annotation job", "Run", "Asked", "Targets and guidelines", "Endpoint"],
            [
                [
                    md(annotator_label(job.settings.stored_as)),
                    md(job.run_id),
                    md(repeats_text(job.settings)),
                    md(targets_text(job.settings)),
                    md(endpoint_text(job.settings)),
                ]
                for job in content.annotation_jobs
            ],
        )
    return lines


def _tree_section(section: TreeSection, questions: Mapping[str, str]) -> list[str]:
    spec = section.spec
    applications = list(section.results)
    lines = [f"## {md(section.title)}", ""]
    lines += [f"> Warning: {md(warning)}\n" for warning in section.warnings]
    if section.dimensions and applications:
        rows = []
        for node_id in section.dimensions:
            nodes = [section.results[app].find(node_id) for app in applications]
            label = md(node_label(spec, nodes[0], questions))
            rows.append([label, *(_value_with_interval(node) for node in nodes)])
        lines += _table(["Dimension", *(md(a) for a in applications)], rows)
    for application in applications:
        lines += [f"### {md(application)}", ""]
        lines += list(_outline(section, section.results[application], questions, 0, set()))
        lines.append("")
    for app, table in section.history.items():
        lines += [f"### {md(app)} over time", ""]
        root = section.results[app]
        labels = {c: node_label(spec, root.find(c), questions) for c in table.columns}
        lines += _table(
            ["Run", *(md(labels[c]) for c in table.columns)],
            [
                [f"`{run}`", *(number(table.value(run, c)) for c in table.columns)]
                for run in table.rows
            ],
        )
    tradeoffs = section.dialogue_correlations.tradeoffs()
    if tradeoffs:
        lines += ["Trade-offs across dialogues (Spearman ρ ≤ −0.3):", ""]
        lines += [
            f"- {md(pair.first)} vs {md(pair.second)}: ρ = {number(pair.rho, 2)}, n = {pair.n}"
            for pair in tradeoffs
        ]
        lines.append("")
    return lines


def _outline(
    section: TreeSection,
    node: NodeResult,
    questions: Mapping[str, str],
    depth: int,
    seen: set[str],
) -> Iterable[str]:
    indent = "  " * depth
    label = md(node_label(section.spec, node, questions))
    if node.id in seen:
        yield f"{indent}- {label}: shown above"
        return
    seen.add(node.id)
    if node.empty:
        # An empty branch is empty all the way down; its parts would only repeat that.
        yield f"{indent}- {label}: {EMPTY} empty (no evidence)"
        return
    value = "aggregation" if isinstance(node.value, tuple) else _value_with_interval(node)
    yield f"{indent}- {label} ({md(words(node.summarizer))}): {value}"
    for child in node.children:
        yield from _outline(section, child, questions, depth + 1, seen)


def _value_with_interval(node: NodeResult) -> str:
    text = number(node.numeric_value)
    bounds = interval(node.ci_low, node.ci_high)
    # Say how an interval was made when it is not the plain percentile bootstrap.
    how = "" if not node.interval or node.interval.startswith("percentile") else node.interval
    notes = node_notes(
        testers=node.testers,
        warning=node.warning,
        bias=node.bias,
        bias_corrected=node.bias_corrected,
    )
    shown = f"{text} {bounds} n={node.n}{f' ({md(how)})' if how else ''}"
    return f"{shown}{f'; {md(notes)}' if notes else ''}".replace("  ", " ")


def _rates_section(content: ReportContent) -> list[str]:
    lines = ["## Defect rates", "", "### Guardrail violations", ""]
    lines += _rate_table(content.violation_rates)
    lines += _judge_notes(content, GUARDRAIL_VIOLATION)
    for harm, pack in content.harm_packs.items():
        lines += [f"### {md(pack.title)}", ""]
        lines += _rate_table([r for r in content.defect_rates if r.group["harm"] == harm])
        lines += _judge_notes(content, harm)
    if content.judge_corrected:
        lines += ["### Judge-corrected rates", "", CORRECTED_NOTE, ""]
        lines += _corrected_table(content.judge_corrected)
    lines += _hit_section(content.hit_rates) + _sequential_section(content.sequential)
    return lines + _cost_section(content)


def _judge_notes(content: ReportContent, harm: str) -> list[str]:
    """How far the LLM judge agrees with people on ``harm``, a warning when it is low."""
    return [
        f"{'⚠ ' if a.low else ''}{md(a.sentence())}\n"
        for a in content.judge_agreement
        if a.harm == harm
    ]


def _cost_section(content: ReportContent) -> list[str]:
    if not content.cell_costs:
        return []
    lines = ["### What each cell cost", "", COST_NOTE, ""]
    return lines + _table(
        ["Application", "Scenario", "Level", "Dialogues", "Violation rate", *COST_COLUMNS],
        [
            [
                md(cost.group["application"]),
                md(words(cost.group["scenario"])),
                md(words(cost.group["level"])),
                str(cost.dialogues),
                "; ".join(
                    f"{percent(r.rate, 1)} {percent_interval(r.ci_low, r.ci_high)}"
                    for r in content.cell_violation_rates(cost)
                )
                or EMPTY,
                *(source_usage(part) for part in cost_parts(cost)),
            ]
            for cost in content.cell_costs
        ],
    )


def _sequential_section(records: Sequence[SequentialRecord]) -> list[str]:
    lines = []
    for record in records:
        lines += [
            f"### Sequential stopping (run {record.run_id})",
            "",
            f"{md(record.rule)}; labels by {md(', '.join(record.annotated_as) or 'none')}. "
            "Ran: the dialogues the cell's application × scenario × level ran; "
            "n: those its interval rests on; fixed plan: what `corix plan size --rate` "
            "gives at the cell's first-wave rate.",
            "",
        ]
        if record.fixed_plans is not None:
            lines += [f"**{md(record.fixed_plans.text())}**", ""]
        lines += _table(
            [
                "Application",
                "Scenario",
                "Level",
                "Harm",
                "Ran",
                "n",
                "Interval",
                "Stopped",
                "Fixed plan",
            ],
            [
                [
                    md(cell.application),
                    md(words(cell.scenario)),
                    md(words(cell.level)),
                    md(words(cell.harm)),
                    EMPTY if cell.ran is None else str(cell.ran),
                    str(cell.n),
                    percent_interval(cell.low, cell.high),
                    md(cell.stopped_text()),
                    EMPTY if cell.fixed_plan is None else str(cell.fixed_plan),
                ]
                for cell in record.cells
            ],
        )
    return lines


def _hit_section(hits: Sequence[HitRate]) -> list[str]:
    if not hits:
        return []
    k = hits[0].k
    lines = [
        f"### Attacker-style rates (hit@{k})",
        "",
        f"The chance that at least one of {k} attempts of a persona template succeeds "
        "(unbiased pass@k estimator, averaged over templates), beside the pooled rate; "
        f"intervals: {hits[0].interval}.",
        "",
    ]
    return lines + _table(
        [
            "Harm",
            "Application",
            "Level",
            "Annotators",
            "Templates",
            "Pooled",
            "Interval",
            f"hit@{k}",
            "Interval",
        ],
        [
            [
                md(words(hit.group["harm"])),
                md(words(hit.group["application"])),
                md(words(hit.group["level"])),
                md(annotator_label(hit.group.get("source") or hit.group.get("annotator") or "all")),
                f"{hit.units} (+{hit.too_few} with fewer than {k})",
                percent(hit.pooled_rate, 1),
                percent_interval(hit.pooled_low, hit.pooled_high),
                percent(hit.hit_rate, 1),
                percent_interval(hit.hit_low, hit.hit_high),
            ]
            for hit in hits
        ],
    )


def _corrected_table(rates: Sequence[CorrectedRate]) -> list[str]:
    return _table(
        [
            "Harm",
            "Application",
            "Judge",
            "Raw",
            "Sensitivity",
            "Specificity",
            "Pairs",
            "Corrected",
            "Interval",
            "Note",
        ],
        [
            [
                md(words(rate.group["harm"])),
                md(rate.group["application"]),
                md(annotator_label(rate.judge)),
                percent(rate.raw_rate, 1),
                percent(rate.sensitivity),
                percent(rate.specificity),
                str(rate.n_calibration),
                percent(rate.corrected_rate, 1),
                percent_interval(rate.ci_low, rate.ci_high),
                md(rate.note or ""),
            ]
            for rate in rates
        ],
    )


def _rate_table(rates: Sequence[DefectRate]) -> list[str]:
    if not rates:
        return ["Nothing annotated for this yet.", ""]
    columns = ["application", "scenario", "level"]
    return _table(
        [
            *(c.capitalize() for c in columns),
            "Annotators",
            "Rate",
            "Interval",
            "Defects / n",
            "Testers",
            "Not measurable",
        ],
        [
            [
                *(md(words(rate.group[c])) for c in columns),
                md(annotator_label(rate.who)),
                percent(rate.rate, 1),
                percent_interval(rate.ci_low, rate.ci_high),
                f"{rate.defects:g} / {rate.n}",
                str(rate.testers) + (f" ⚠ {md(rate.warning)}" if rate.warning else ""),
                str(rate.not_measurable),
            ]
            for rate in rates
        ],
    )


def _views_section(content: ReportContent, questions: Mapping[str, str]) -> list[str]:
    lines = ["## Annotators and users", ""]
    rows = [
        [
            md(section.title),
            md(gap.application),
            md(
                node_label(
                    section.spec, section.results[gap.application].find(gap.node_id), questions
                )
            ),
            md(" · ".join(words(v) for v in gap.context.values())),
            number(gap.annotator),
            number(gap.user),
            signed(gap.difference, 1),
            "yes" if gap.disagrees else "",
        ]
        for section in content.trees
        for gap in section.views
    ]
    if not rows:
        return [*lines, "No tree splits annotator labels from user perception.", ""]
    return lines + _table(
        ["Tree", "Application", "Node", "Where", "Annotators", "Users", "Gap", "Flagged"], rows
    )


def _questionnaire_section(content: ReportContent) -> list[str]:
    lines = ["## Questionnaires", ""]
    items = content.questionnaire.items
    if not items:
        return [*lines, "No numeric questionnaire answers are stored for this run.", ""]
    lines += _table(
        ["Item", "Application", "Level", "n", "Mean", "Median", "SD", "IQR"],
        [
            [
                md(s.wording or item_label(s.item)),
                md(s.application),
                md(words(s.level)),
                str(s.n),
                number(s.mean, 2),
                number(s.median),
                number(s.sd, 2),
                number(s.iqr),
            ]
            for s in items
        ],
    )
    comparisons = content.questionnaire.comparisons
    if comparisons:
        methods = sorted({c.method for c in comparisons})
        lines += [f"Method: {md('; '.join(methods))}.", ""]
        lines += _table(
            ["Item", "Compared", "Within", "H", "p", "ε²", "Pairs (r, Holm p)"],
            [
                [
                    md(c.wording or item_label(c.item)),
                    md(c.by),
                    md(", ".join(words(v) for v in c.where.values())),
                    number(c.h, 2),
                    p_value(c.p_value),
                    number(c.epsilon_squared, 2),
                    "; ".join(
                        f"{md(p.first)} vs {md(p.second)}: r = {signed(p.rank_biserial)}, "
                        f"p = {p_value(p.p_adjusted)}"
                        for p in c.pairwise
                    ),
                ]
                for c in comparisons
            ],
        )
    return lines


def _agreement_section(content: ReportContent, questions: Mapping[str, str]) -> list[str]:
    lines = ["## Agreement between annotators", ""]
    if not content.agreement:
        return [*lines, "Fewer than two annotators labelled this run.", ""]
    for pair in content.agreement:
        lines += [f"### {md(annotator_label(pair.a))} vs {md(annotator_label(pair.b))}", ""]
        lines += _table(
            [
                "Question",
                "Items",
                "Exact",
                "±1",
                "Scale",
                "κ (plain / quadratic)",
                "α (nominal / ordinal)",
            ],
            [
                [
                    md(questions.get(r.question_id or "", r.question_id or EMPTY)),
                    str(r.n_items),
                    percent(r.exact_agreement),
                    percent(r.relaxed_agreement),
                    "ordinal" if r.ordinal else "nominal",
                    f"{number(r.cohen_kappa_quadratic, 2)} quadratic"
                    if r.ordinal
                    else f"{number(r.cohen_kappa, 2)} plain",
                    f"{number(r.alpha_ordinal if r.ordinal else r.alpha_nominal, 2)} "
                    + ("ordinal" if r.ordinal else "nominal"),
                ]
                for r in pair.reports
            ],
        )
    return lines


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(" --- " for _ in header) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
        "",
    ]
