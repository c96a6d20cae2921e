"""View models for the HTML report: scored nodes, comparison tables and radars, ready to print.

Templates only lay out what these give them; every number is formatted and every link
target resolved here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from corix.measurement import CorrelationMatrix, DefectRate, NodeResult, TreeSpec
from corix.report.anchors import node_anchor, session_anchor
from corix.report.colors import EMPTY_COLOUR, ink_on, risk_colour, series_colour
from corix.report.content import TreeSection
from corix.report.formatting import interval, node_notes, number, short_id, words
from corix.report.labels import node_label
from corix.report.svg import RadarSeries, radar_svg

MAX_SESSION_LINKS = 24
"""Session links listed under one node; the rest are counted (and listed in the JSON)."""
OPEN_DEPTH = 1
"""Tree levels shown unfolded: the root and its dimensions."""


@dataclass(frozen=True)
class SessionLink:
    anchor: str
    label: str


@dataclass(frozen=True)
class Score:
    """A node's value as printed: text, interval, n, colour and its place on the scale."""

    value: str
    interval: str
    notes: str
    """What the interval rests on (testers, a warning) and a max/min node's bias, in words:
    apart from the interval, so that it can wrap."""
    n: int
    colour: str
    ink: str
    empty: bool
    aggregation: bool
    position: float | None
    """Where the value lies on the scale, in percent (for the value bar)."""
    band: tuple[float, float] | None
    """The interval's ends on the scale, in percent."""


@dataclass(frozen=True)
class NodeView:
    anchor: str
    node_id: str
    label: str
    question: str | None
    """The question a question node summarizes (``label`` is its text)."""
    summarizer: str
    context: str
    score: Score
    sessions: tuple[SessionLink, ...]
    n_sessions: int
    depth: int
    children: tuple[NodeView, ...]
    shown_at: str | None
    """Set when this node was already shown under another parent (a DAG): its anchor."""
    open: bool


@dataclass(frozen=True)
class Cell:
    score: Score
    anchor: str


@dataclass(frozen=True)
class ComparisonRow:
    node_id: str
    label: str
    depth: int
    cells: tuple[Cell, ...]


def score_of(node: NodeResult, spec: TreeSpec) -> Score:
    low, high = spec.scale.low, spec.scale.high
    aggregation = isinstance(node.value, tuple)
    value = node.numeric_value
    colour = EMPTY_COLOUR if aggregation else risk_colour(value, low, high)
    band = None
    if node.ci_low is not None and node.ci_high is not None:
        band = (_share(node.ci_low, low, high), _share(node.ci_high, low, high))
    return Score(
        value="aggregation" if aggregation and not node.empty else number(value),
        interval=interval(node.ci_low, node.ci_high),
        notes=node_notes(
            testers=node.testers,
            warning=node.warning,
            bias=node.bias,
            bias_corrected=node.bias_corrected,
        ),
        n=node.n,
        colour=colour,
        ink=ink_on(colour),
        empty=node.empty,
        aggregation=aggregation,
        position=None if value is None else _share(value, low, high),
        band=band,
    )


def node_view(
    tree: str,
    application: str,
    root: NodeResult,
    spec: TreeSpec,
    *,
    questions: Mapping[str, str],
    session_labels: Mapping[str, str],
) -> NodeView:
    """The drill-down of one application's tree; a shared node is drawn once, then linked.

    ``questions`` maps question ids to their text, shown next to question nodes;
    ``session_labels`` names the sessions listed under each node.
    """
    drawn: set[str] = set()

    def build(node: NodeResult, depth: int) -> NodeView:
        target = node_anchor(tree, application, node.id)
        first_time = node.id not in drawn
        drawn.add(node.id)
        dialogues = node.dialogues or ()
        return NodeView(
            anchor=target,
            node_id=node.id,
            label=node_label(spec, node, questions),
            question=spec.node(node.id).question,
            summarizer=node.summarizer,
            context=" · ".join(f"{words(k)}: {words(v)}" for k, v in node.context.items()),
            score=score_of(node, spec),
            sessions=session_links(dialogues[:MAX_SESSION_LINKS], session_labels),
            n_sessions=len(dialogues),
            depth=depth,
            children=tuple(build(child, depth + 1) for child in node.children)
            if first_time
            else (),
            shown_at=None if first_time else target,
            open=depth < OPEN_DEPTH,
        )

    return build(root, 0)


def comparison_rows(
    section: TreeSection, tree: str, questions: Mapping[str, str], *, dimensions_only: bool
) -> list[ComparisonRow]:
    """Node × application, in the first application's tree order (aggregations left out)."""
    applications = list(section.results)
    if not applications:
        return []
    by_application = {
        application: {node.id: node for node in root.walk()}
        for application, root in section.results.items()
    }
    wanted = set(section.dimensions)
    rows = []
    for node, depth in _walk_with_depth(section.results[applications[0]]):
        if isinstance(node.value, tuple) or (dimensions_only and node.id not in wanted):
            continue
        cells = tuple(
            Cell(
                score=score_of(by_application[application][node.id], section.spec),
                anchor=node_anchor(tree, application, node.id),
            )
            for application in applications
        )
        label = node_label(section.spec, node, questions)
        rows.append(ComparisonRow(node.id, label, depth, cells))
    return rows


def radar_charts(section: TreeSection, tree: str) -> tuple[Markup, list[tuple[str, Markup]]]:
    """All applications on one radar, and one radar per application (name, svg)."""
    spec = section.spec
    axes = [spec.node(node_id).label or node_id for node_id in section.dimensions]
    series = [
        _radar_series(section, tree, application, index)
        for index, application in enumerate(section.results)
    ]
    combined = radar_svg(
        axes, series, low=spec.scale.low, high=spec.scale.high, title=f"{spec.title}: all"
    )
    singles = [
        (
            one.name,
            radar_svg(
                axes,
                [one],
                low=spec.scale.low,
                high=spec.scale.high,
                title=f"{spec.title}: {one.name}",
                compact=True,
            ),
        )
        for one in series
    ]
    return combined, singles


def empty_dimensions(section: TreeSection) -> Mapping[str, list[str]]:
    """Application → labels of its dimensions without a value."""
    found: dict[str, list[str]] = {}
    for application, root in section.results.items():
        labels = [
            root.find(node_id).label or node_id
            for node_id in section.dimensions
            if root.find(node_id).empty
        ]
        if labels:
            found[application] = labels
    return found


def _radar_series(section: TreeSection, tree: str, application: str, index: int) -> RadarSeries:
    root = section.results[application]
    nodes = [root.find(node_id) for node_id in section.dimensions]
    return RadarSeries(
        name=application,
        colour=series_colour(index),
        values=[node.numeric_value for node in nodes],
        lows=[node.ci_low for node in nodes],
        highs=[node.ci_high for node in nodes],
        counts=[node.n for node in nodes],
        links=[node_anchor(tree, application, node.id) for node in nodes],
    )


def _walk_with_depth(root: NodeResult) -> Iterator[tuple[NodeResult, int]]:
    seen: set[str] = set()
    pending: list[tuple[NodeResult, int]] = [(root, 0)]
    while pending:
        node, depth = pending.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        yield node, depth
        pending.extend((child, depth + 1) for child in reversed(node.children))


def _share(value: float, low: float, high: float) -> float:
    return round(min(1.0, max(0.0, (value - low) / (high - low))) * 100, 1)


def session_links(session_ids: Sequence[str], labels: Mapping[str, str]) -> tuple[SessionLink, ...]:
    return tuple(SessionLink(session_anchor(s), labels.get(s) or short_id(s)) for s in session_ids)


def path_labels(section: TreeSection, questions: Mapping[str, str]) -> dict[str, str]:
    """Node id → the labels on its path below the root (``Safety › Red teaming``)."""
    first = next(iter(section.results.values()), None)
    if first is None:
        return {}
    paths: dict[str, str] = {}
    pending: list[tuple[NodeResult, tuple[str, ...]]] = [(first, ())]
    while pending:
        node, above = pending.pop()
        if node.id in paths:
            continue
        label = node_label(section.spec, node, questions)
        path = (*above, label) if node is not first else ()
        paths[node.id] = " › ".join(path) or label
        pending.extend((child, path) for child in reversed(node.children))
    return paths


@dataclass(frozen=True)
class RateRow:
    """One application × scenario × level, with each annotator's rate (if any)."""

    application: str
    scenario: str
    level: str
    by_annotator: Mapping[str, DefectRate]


def rate_rows(rates: Iterable[DefectRate]) -> tuple[list[str], list[RateRow]]:
    """Rates pivoted: annotator sources as columns, groups as rows (in the rates' order)."""
    annotators: dict[str, None] = {}
    rows: dict[tuple[str, str, str], dict[str, DefectRate]] = {}
    for rate in rates:
        group = rate.group
        annotators[rate.who] = None
        key = (group["application"], group["scenario"], group["level"])
        rows.setdefault(key, {})[rate.who] = rate
    return sorted(annotators), [RateRow(*key, cells) for key, cells in rows.items()]


def defined_names(matrix: CorrelationMatrix) -> list[int]:
    """Indexes of the variables that are defined with at least one other variable."""
    size = len(matrix.names)
    return [
        i
        for i in range(size)
        if any(j != i and not math.isnan(matrix.rho[i][j]) for j in range(size))
    ]
