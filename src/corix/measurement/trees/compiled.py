"""Compiling a tree config into a :class:`TreeSpec`: checked, expanded, ready to score.

Compilation resolves every name (nodes, questions, summarizers), rejects cycles and
negative weights, works out each node's codomain, and expands split nodes: a template
reached under different leaf filters (e.g. once per level) becomes one node *instance*
per filter. Instances are listed children-first, so scoring is a single forward pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError

from corix.config import format_location
from corix.domain import Level
from corix.errors import ConfigError, UnknownNameError, unknown_name
from corix.measurement.trees.config import ChildConfig, NodeConfig, TreeConfig
from corix.measurement.trees.filters import FILTER_COLUMNS, LeafFilter
from corix.measurement.trees.intervals import Interval
from corix.measurement.trees.leaves import LeafSource
from corix.measurement.trees.mappings import ChoiceMapping, QuestionMapping
from corix.measurement.trees.summarizers import (
    SUMMARIZERS,
    Aggregation,
    NumericSummarizer,
    Summarizer,
)

Location = tuple[str | int, ...]
LineFinder = Callable[[Location], int | None]

_DEFAULT_SPLIT_VALUES: dict[str, list[str]] = {
    "level": [level.value for level in Level],
    "source": [source.value for source in LeafSource],
}


@dataclass(frozen=True)
class NodeInstance:
    """One node of the expanded tree.

    ``template`` is the id in the tree file; ``id`` adds ``@values`` when the template is
    expanded more than once (e.g. ``safety_labels@red_teaming``). ``context`` holds the
    split values on the path from the root, e.g. ``{"level": "red_teaming"}``.
    ``items_codomain`` bounds what the node summarizes (its responses or children);
    ``codomain`` bounds its own value (``None`` for an aggregation).
    """

    id: str
    template: str
    label: str
    summarizer_name: str
    summarizer: Summarizer
    question: str | None
    filter: LeafFilter
    context: Mapping[str, str]
    children: tuple[int, ...]
    weights: tuple[float, ...]
    items_codomain: Interval
    codomain: Interval | None

    @property
    def is_numeric(self) -> bool:
        return isinstance(self.summarizer, NumericSummarizer)


@dataclass(frozen=True)
class TreeSpec:
    """A validated, expanded CoRIx tree. ``nodes`` lists children before parents."""

    name: str
    title: str
    description: str
    source: str
    scale: Interval
    questions: Mapping[str, QuestionMapping]
    nodes: tuple[NodeInstance, ...]
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {node.id: i for i, node in enumerate(self.nodes)})

    @property
    def root(self) -> NodeInstance:
        return self.nodes[-1]

    def position(self, node_id: str) -> int:
        """Index of ``node_id`` in ``nodes``; unknown ids get a "did you mean"."""
        try:
            return self._index[node_id]
        except KeyError:
            raise unknown_name("node", node_id, self._index) from None

    def node(self, node_id: str) -> NodeInstance:
        return self.nodes[self.position(node_id)]


@dataclass(frozen=True)
class _Edge:
    target: str
    weight: float
    split: tuple[str, str] | None = None


@dataclass(frozen=True)
class _Template:
    """A node as written in the file (inline questions included), names resolved."""

    id: str
    label: str
    summarizer_name: str
    summarizer: Summarizer
    where: LeafFilter
    question: str | None
    edges: tuple[_Edge, ...]
    location: Location


class _Compiler:
    def __init__(self, config: TreeConfig, source: str, find_line: LineFinder | None) -> None:
        self.config = config
        self.source = source
        self.find_line = find_line
        self.scale = Interval(config.scale.min, config.scale.max)
        self.templates: dict[str, _Template] = {}
        self.codomains: dict[str, Interval | None] = {}
        self.items_codomains: dict[str, Interval] = {}

    def error(self, message: str, location: Location) -> ConfigError:
        line = self.find_line(location) if self.find_line else None
        return ConfigError(message, path=self.source, field=format_location(location), line=line)

    def compile(self) -> TreeSpec:
        self.check_questions()
        for node_id, node in self.config.nodes.items():
            self.add_node(node_id, node)
        if self.config.root not in self.templates:
            raise self.error(f"root node '{self.config.root}' is not defined", ("root",))
        self.reject_cycles()
        self.reject_unreachable()
        self.reject_ignored_weights()
        gated: dict[str, tuple[frozenset[str], bool]] = {}
        self.reject_mixed_gating(self.config.root, gated)
        for template_id in self.templates:
            self.codomain(template_id)
        drafts = _Expansion(self.templates).run(self.config.root)
        return self.finish(drafts)

    # -- names -------------------------------------------------------------------------

    def check_questions(self) -> None:
        for question_id, mapping in self.config.questions.items():
            self.resolve_summarizer(
                mapping.summarizer,
                {},
                f"question '{question_id}'",
                ("questions", question_id, "summarizer"),
            )
            if isinstance(mapping, ChoiceMapping):
                outside = [c for c, v in mapping.values.items() if v not in self.scale]
                if outside:
                    raise self.error(
                        f"question '{question_id}': choice value(s) for {', '.join(outside)} "
                        f"lie outside the tree's scale {self.scale.low:g}–{self.scale.high:g}",
                        ("questions", question_id, "values"),
                    )

    def resolve_summarizer(
        self, name: str, params: Mapping[str, object], owner: str, location: Location
    ) -> Summarizer:
        try:
            kind = SUMMARIZERS.get(name)
        except UnknownNameError as exc:
            raise self.error(f"{owner}: {exc}", location) from None
        try:
            return kind.model_validate(dict(params))
        except ValidationError as exc:
            first = exc.errors()[0]
            parameter = format_location(tuple(first["loc"]))
            raise self.error(
                f"{owner}: {name} parameter '{parameter}': {first['msg']}",
                (*location[:-1], "params", *first["loc"]),
            ) from None

    def check_question(self, question: str, owner: str, location: Location) -> None:
        if question not in self.config.questions:
            raise self.error(
                f"{owner}: {unknown_name('question', question, self.config.questions)!s} "
                "Declare it under 'questions' with its mapping.",
                location,
            )

    def add_node(self, node_id: str, node: NodeConfig) -> None:
        location: Location = ("nodes", node_id)
        owner = f"node '{node_id}'"
        if node.question is not None:
            self.add_question(node_id, node.question, node, location)
            return
        if node.split_by is not None:
            edges = self.split_edges(node_id, node.split_by, node, location)
        else:
            edges = [
                self.add_child(node_id, child, (*location, "children", i))
                for i, child in enumerate(node.children or [])
            ]
        name = node.summarizer or "mean"
        self.templates[node_id] = _Template(
            id=node_id,
            label=node.label or node_id,
            summarizer_name=name,
            summarizer=self.resolve_summarizer(name, node.params, owner, (*location, "summarizer")),
            where=LeafFilter.from_where(node.where),
            question=None,
            edges=tuple(edges),
            location=location,
        )

    def add_question(
        self, node_id: str, question: str, node: NodeConfig | ChildConfig, location: Location
    ) -> None:
        owner = f"node '{node_id}'"
        self.check_question(question, owner, (*location, "question"))
        name = node.summarizer or self.config.questions[question].summarizer
        summarizer = self.resolve_summarizer(name, node.params, owner, (*location, "summarizer"))
        if isinstance(summarizer, Aggregation):
            raise self.error(
                f"{owner}: 'aggregation' needs child nodes; a question node summarizes numbers",
                (*location, "summarizer"),
            )
        self.templates[node_id] = _Template(
            id=node_id,
            label=node.label or question,
            summarizer_name=name,
            summarizer=summarizer,
            where=LeafFilter.from_where(node.where),
            question=question,
            edges=(),
            location=location,
        )

    def add_child(self, parent: str, child: ChildConfig, location: Location) -> _Edge:
        if child.node is not None:
            if child.node not in self.config.nodes:
                raise self.error(
                    f"node '{parent}': child '{child.node}' is not defined", (*location, "node")
                )
            return _Edge(child.node, child.weight)
        assert child.question is not None  # ChildConfig names a node or a question
        child_id = child.id or f"{parent}.{child.question}"
        if child_id in self.config.nodes or child_id in self.templates:
            raise self.error(
                f"node '{parent}': inline question node '{child_id}' clashes with another "
                "node; give it a distinct 'id'",
                location,
            )
        self.add_question(child_id, child.question, child, location)
        return _Edge(child_id, child.weight)

    def split_edges(
        self, node_id: str, column: str, node: NodeConfig, location: Location
    ) -> list[_Edge]:
        values = node.split_values() or _DEFAULT_SPLIT_VALUES.get(column)
        if not values:
            raise self.error(
                f"node '{node_id}': splitting by {column} needs the 'values' to split into",
                (*location, "split_by"),
            )
        allowed = _DEFAULT_SPLIT_VALUES.get(column)
        for value in values:
            if allowed is not None and value not in allowed:
                raise self.error(
                    f"node '{node_id}': '{value}' is not a {column} (expected one of "
                    f"{', '.join(allowed)})",
                    (*location, "each" if isinstance(node.each, dict) else "values"),
                )
        for value in node.weights:
            if value not in values:
                raise self.error(
                    f"node '{node_id}': weight for '{value}', which is not split into",
                    (*location, "weights", value),
                )
        edges = []
        for value in values:
            target = node.each_for(value)
            if target not in self.config.nodes:
                raise self.error(
                    f"node '{node_id}': 'each' names '{target}', which is not defined",
                    (*location, "each"),
                )
            edges.append(_Edge(target, node.weights.get(value, 1.0), (column, value)))
        return edges

    # -- graph checks ------------------------------------------------------------------

    def reject_cycles(self) -> None:
        state: dict[str, str] = {}  # "open" while on the DFS path, then "done"
        path: list[str] = []

        def visit(template_id: str) -> None:
            state[template_id] = "open"
            path.append(template_id)
            for edge in self.templates[template_id].edges:
                if state.get(edge.target) == "open":
                    cycle = [*path[path.index(edge.target) :], edge.target]
                    raise self.error(
                        f"cycle: {' → '.join(cycle)}", self.templates[cycle[0]].location
                    )
                if edge.target not in state:
                    visit(edge.target)
            path.pop()
            state[template_id] = "done"

        for template_id in self.templates:
            if template_id not in state:
                visit(template_id)

    def reject_unreachable(self) -> None:
        seen = {self.config.root}
        pending = [self.config.root]
        while pending:
            for edge in self.templates[pending.pop()].edges:
                if edge.target not in seen:
                    seen.add(edge.target)
                    pending.append(edge.target)
        for template_id, template in self.templates.items():
            if template_id not in seen:
                raise self.error(
                    f"node '{template_id}' is not reachable from the root '{self.config.root}'",
                    template.location,
                )

    def reject_ignored_weights(self) -> None:
        for template_id, template in self.templates.items():
            summarizer = template.summarizer
            if isinstance(summarizer, NumericSummarizer) and summarizer.uses_weights:
                continue
            for i, edge in enumerate(template.edges):
                if edge.weight != 1:
                    raise self.error(
                        f"node '{template_id}': '{template.summarizer_name}' ignores edge "
                        f"weights, but '{edge.target}' has weight {edge.weight:g}; use 'mean' "
                        "(weighted) or leave the weight out",
                        (*template.location, "children", i)
                        if edge.split is None
                        else (*template.location, "weights", edge.split[1]),
                    )

    def reject_mixed_gating(
        self, template_id: str, seen: dict[str, tuple[frozenset[str], bool]]
    ) -> tuple[frozenset[str], bool]:
        """Gated questions under a node, and whether any question asked of every dialogue is.

        A gated question's answers describe only the dialogues it was asked about (e.g.
        those with a violation); averaged with answers about every dialogue, fewer
        violations would raise the score. A numeric node may hold one kind or the other.
        """
        if template_id in seen:
            return seen[template_id]
        template = self.templates[template_id]
        if template.question is not None:
            is_gated = self.config.questions[template.question].gated
            result = (frozenset({template.question}) if is_gated else frozenset(), not is_gated)
        else:
            parts = [self.reject_mixed_gating(edge.target, seen) for edge in template.edges]
            gated = frozenset().union(*(names for names, _ in parts))
            ungated = any(every for _, every in parts)
            if gated and ungated and isinstance(template.summarizer, NumericSummarizer):
                raise self.error(
                    f"node '{template_id}' summarizes gated question(s) "
                    f"{', '.join(sorted(gated))} (asked only of some dialogues, e.g. after a "
                    "violation) together with questions asked of every dialogue; give the "
                    "gated questions a node of their own",
                    template.location,
                )
            result = (gated, ungated)
        seen[template_id] = result
        return result

    def codomain(self, template_id: str) -> Interval | None:
        if template_id in self.codomains:
            return self.codomains[template_id]
        template = self.templates[template_id]
        owner = f"node '{template_id}'"
        if template.question is not None:
            children: Interval | None = self.config.questions[template.question].codomain(
                self.scale
            )
        else:
            child_ranges = []
            for edge in template.edges:
                child_range = self.codomain(edge.target)
                if child_range is None and isinstance(template.summarizer, NumericSummarizer):
                    raise self.error(
                        f"{owner}: '{template.summarizer_name}' needs numbers, but child "
                        f"'{edge.target}' is an aggregation",
                        (*template.location, "summarizer"),
                    )
                if child_range is not None:
                    child_ranges.append(child_range)
            children = Interval.hull(child_ranges)
        items = children or self.scale
        try:
            result = template.summarizer.codomain(items, self.scale)
        except ValueError as exc:
            raise self.error(f"{owner}: {exc}", (*template.location, "summarizer")) from None
        self.items_codomains[template_id] = items
        self.codomains[template_id] = result
        return result

    # -- instances ---------------------------------------------------------------------

    def finish(self, drafts: list[_Draft]) -> TreeSpec:
        by_template: dict[str, list[_Draft]] = {}
        for draft in drafts:
            by_template.setdefault(draft.template.id, []).append(draft)
        ids = [_instance_id(draft, by_template[draft.template.id]) for draft in drafts]
        nodes = tuple(
            NodeInstance(
                id=instance_id,
                template=draft.template.id,
                label=draft.template.label,
                summarizer_name=draft.template.summarizer_name,
                summarizer=draft.template.summarizer,
                question=draft.template.question,
                filter=draft.filter,
                context=draft.context,
                children=draft.children,
                weights=tuple(edge.weight for edge in draft.template.edges),
                items_codomain=self.items_codomains[draft.template.id],
                codomain=self.codomains[draft.template.id],
            )
            for instance_id, draft in zip(ids, drafts, strict=True)
        )
        return TreeSpec(
            name=self.config.name,
            title=self.config.title or self.config.name,
            description=self.config.description,
            source=self.source,
            scale=self.scale,
            questions=dict(self.config.questions),
            nodes=nodes,
        )


@dataclass(frozen=True)
class _Draft:
    template: _Template
    filter: LeafFilter
    context: Mapping[str, str]
    children: tuple[int, ...]


class _Expansion:
    """Instantiates templates from the root down; (template, filter) pairs are shared."""

    def __init__(self, templates: Mapping[str, _Template]) -> None:
        self.templates = templates
        self.drafts: list[_Draft] = []
        self.seen: dict[tuple[str, LeafFilter], int] = {}

    def run(self, root: str) -> list[_Draft]:
        self.visit(root, LeafFilter(), {})
        return self.drafts

    def visit(self, template_id: str, incoming: LeafFilter, context: dict[str, str]) -> int:
        template = self.templates[template_id]
        leaf_filter = incoming.intersect(template.where)
        key = (template_id, leaf_filter)
        if key in self.seen:
            return self.seen[key]
        children = []
        for edge in template.edges:
            child_filter, child_context = leaf_filter, context
            if edge.split is not None:
                column, value = edge.split
                child_filter = leaf_filter.restrict(column, [value])
                child_context = {**context, column: value}
            children.append(self.visit(edge.target, child_filter, child_context))
        self.drafts.append(_Draft(template, leaf_filter, context, tuple(children)))
        self.seen[key] = len(self.drafts) - 1
        return self.seen[key]


def _instance_id(draft: _Draft, siblings: list[_Draft]) -> str:
    """The template id, plus ``@`` and the filter values that tell its instances apart."""
    if len(siblings) == 1:
        return draft.template.id
    differing = [
        column
        for column in FILTER_COLUMNS
        if len({sibling.filter.allowed(column) for sibling in siblings}) > 1
    ]
    return f"{draft.template.id}@{'/'.join(draft.filter.describe(c) for c in differing)}"


def compile_tree(
    config: TreeConfig, *, source: str = "<tree>", find_line: LineFinder | None = None
) -> TreeSpec:
    """Check and expand ``config``; errors name ``source``, the field and (if known) the line."""
    return _Compiler(config, source, find_line).compile()
