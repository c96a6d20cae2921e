"""The self-contained HTML report: one file, no network, no script but one fixed snippet.

Every text from the record (replies, user turns, annotator reasoning, names) goes through
Jinja's autoescaping. A Content-Security-Policy allows no sources at all except inline
styles and the one script below (by its hash), so even text that slipped through escaping
could neither run nor load anything. The script only unfolds the ``<details>`` around a
link's target, so that links into folded sections land on something visible.
"""

from __future__ import annotations

import base64
import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from corix.domain import step_views
from corix.report import anchors, colors, formatting, provenance, simulation_section, written
from corix.report.content import ReportContent, TreeSection
from corix.report.html_views import (
    ComparisonRow,
    NodeView,
    comparison_rows,
    defined_names,
    empty_dimensions,
    node_view,
    path_labels,
    radar_charts,
    rate_rows,
    session_links,
)
from corix.report.labels import (
    CORRECTED_NOTE,
    annotator_label,
    answer_label,
    category_label,
    item_label,
    node_label,
    question_texts,
)
from corix.report.sessions import AnnotationNote
from corix.report.svg import risk_legend_svg

_UNFOLD_SCRIPT = (
    "(function(){function unfold(){var id=decodeURIComponent(location.hash.slice(1));"
    "if(!id)return;var target=document.getElementById(id);if(!target)return;"
    "for(var e=target;e;e=e.parentElement){if(e.tagName==='DETAILS')e.open=true;}"
    "target.scrollIntoView();}window.addEventListener('hashchange',unfold);unfold();})();"
)
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_UNFOLD_SCRIPT.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    f"script-src 'sha256-{_SCRIPT_HASH}'; base-uri 'none'; form-action 'none'"
)


@dataclass(frozen=True)
class TreeView:
    key: str
    section: TreeSection
    radar: Markup
    radars: list[tuple[str, Markup]]
    empty: Mapping[str, list[str]]
    legend: Markup
    dimension_rows: list[ComparisonRow]
    node_rows: list[ComparisonRow]
    drilldowns: list[tuple[str, NodeView]]
    labels: Mapping[str, str]
    """Node id → readable label, for tables keyed by node id."""
    paths: Mapping[str, str]
    """Node id → the labels on its path, for tables that list nodes out of the tree."""


def render_html(content: ReportContent) -> str:
    questions = question_texts(content.schema, content.harm_packs)
    labels = content.sessions.labels
    trees = [_tree_view(section, questions, labels) for section in content.trees]
    # Per session: the annotators who found a violation, and whether anyone screened it.
    flags: defaultdict[str, list[str]] = defaultdict(list)
    screened: set[str] = set()
    for rate in content.violation_rates:
        screened.update(rate.dialogues)
        for session_id in rate.defect_dialogues:
            flags[session_id].append(rate.who)
    env = _environment()
    env.globals["ordered_notes"] = _note_order(content)
    env.globals["session_links"] = lambda ids: session_links(ids, labels)
    # The report is the evaluation team's: tool steps unblinded, each cut for the page.
    env.globals["turn_steps"] = lambda turn: step_views(turn.messages, blinded=False, limit=4000)
    env.globals["answer_label"] = lambda question, value: answer_label(
        content.schema, question, value
    )
    env.filters["category"] = lambda category: category_label(category, content.harm_packs)
    return env.get_template("report.html.j2").render(
        r=content,
        trees=trees,
        violation_flags=flags,
        screened=screened,
        questions=questions,
        csp=CONTENT_SECURITY_POLICY,
        corrected_note=CORRECTED_NOTE,
        script=Markup(_UNFOLD_SCRIPT),  # noqa: S704 - a constant, hashed into the policy
    )


def _tree_view(
    section: TreeSection, questions: Mapping[str, str], session_labels: Mapping[str, str]
) -> TreeView:
    key = section.key
    radar, radars = radar_charts(section, key)
    # Labels from the tree file, refined (split copies named by their value) where scored.
    labels = {node.id: node.label or node.id for node in section.spec.nodes}
    first = next(iter(section.results.values()), None)
    if first is not None:
        labels.update({node.id: node_label(section.spec, node, questions) for node in first.walk()})
    return TreeView(
        key=key,
        section=section,
        radar=radar,
        radars=radars,
        empty=empty_dimensions(section),
        legend=risk_legend_svg(
            section.spec.scale.low, section.spec.scale.high, gradient_id=f"legend-{key}"
        ),
        dimension_rows=comparison_rows(section, key, questions, dimensions_only=True),
        node_rows=comparison_rows(section, key, questions, dimensions_only=False),
        drilldowns=[
            (
                application,
                node_view(
                    key,
                    application,
                    root,
                    section.spec,
                    questions=questions,
                    session_labels=session_labels,
                ),
            )
            for application, root in section.results.items()
        ],
        labels=labels,
        paths=path_labels(section, questions),
    )


def _note_order(
    content: ReportContent,
) -> Callable[[Iterable[AnnotationNote]], list[AnnotationNote]]:
    """Annotations in the schema's order (screening first), harms last, then by annotator."""
    categories = [category.id for category in content.schema.ordered_categories()]
    questions = [question.id for question in content.schema.questions()]

    def rank(note: AnnotationNote) -> tuple[int, str, int, str, int]:
        category = categories.index(note.category) if note.category in categories else 99
        question = questions.index(note.question) if note.question in questions else 99
        return (category, note.category, question, note.annotator, note.pass_no)

    return lambda notes: sorted(notes, key=rank)


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("corix.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        number=formatting.number,
        interval=formatting.interval,
        percent=formatting.percent,
        percent_interval=formatting.percent_interval,
        p_value=formatting.p_value,
        p_equals=formatting.p_equals,
        signed=formatting.signed,
        words=formatting.words,
        short_id=formatting.short_id,
        source_usage=formatting.source_usage,
        annotator=annotator_label,
        job_repeats=provenance.repeats_text,
        job_targets=provenance.targets_text,
        job_endpoint=provenance.endpoint_text,
        report_settings=written.settings_line,
    )
    env.globals.update(
        annotator_label=annotator_label,
        session_anchor=anchors.session_anchor,
        group_anchor=anchors.group_anchor,
        rates_anchor=anchors.rates_anchor,
        node_anchor=anchors.node_anchor,
        rate_rows=rate_rows,
        defined_names=defined_names,
        correlation_colour=colors.correlation_colour,
        series_colour=colors.series_colour,
        risk_colour=colors.risk_colour,
        ink_on=colors.ink_on,
        item_label=item_label,
        EMPTY=formatting.EMPTY,
        COST_COLUMNS=formatting.COST_COLUMNS,
        COST_NOTE=formatting.COST_NOTE,
        cost_parts=formatting.cost_parts,
        sim=simulation_section,
    )
    return env
