"""Scoring a CoRIx tree: one tree of results per application, with bootstrap intervals."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from corix.measurement.stats import (
    FloatArray,
    IntArray,
    cluster_resamples,
    expanded_percentile_interval,
    percentile_interval,
    resampled_unit,
    wilson_cc_arrays,
    wilson_cc_bounds,
)
from corix.measurement.trees.compiled import NodeInstance, TreeSpec
from corix.measurement.trees.engine import PreparedLeaves, TreeEvaluator
from corix.measurement.trees.gating_check import undeclared_gating
from corix.measurement.trees.intervals import Interval
from corix.measurement.trees.leaves import LeafSource, LeafTable
from corix.measurement.trees.loading import load_tree
from corix.measurement.trees.results import (
    NodeDocument,
    NodeProvenance,
    NodeResult,
    NodeValue,
    SetKeysOnly,
)
from corix.measurement.trees.summarizers import Max, Min


def score_tree(
    spec: TreeSpec,
    leaves: LeafTable,
    *,
    bootstrap: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
    include_dialogues: bool = False,
) -> dict[str, NodeResult]:
    """Score ``spec`` for every application in ``leaves``; returns application → root.

    With ``bootstrap`` > 0, each numeric node gets an interval from that many cluster
    bootstrap replicates (dialogues, or their testers, resampled within each
    application, each bringing all its labels and answers), seeded by ``seed``
    and keyed by the leaves' ``dialogue_key`` (else the dialogue id), so reruns give
    identical intervals. ``n`` counts the
    dialogues under a node. ``include_dialogues`` lists their ids, the annotators whose
    labels the node holds and how many questionnaire respondents answered under it.
    """
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be ≥ 0, got {bootstrap}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    prepared = PreparedLeaves(spec, leaves)
    applications = leaves.application.categories
    evaluator = TreeEvaluator(prepared, prepared.application, len(applications))
    point = evaluator.evaluate()
    intervals = _intervals(evaluator, point, bootstrap, seed, confidence) if bootstrap else None
    counts = evaluator.dialogue_counts()
    dialogues = _dialogues_per_node(evaluator) if include_dialogues else None
    provenance = _provenance_per_node(evaluator) if include_dialogues else None
    return {
        application: _assemble(spec, unit, point, counts, intervals, dialogues, provenance)
        for unit, application in enumerate(applications)
    }


def score_tree_per_annotator_kind(
    spec: TreeSpec,
    leaves: LeafTable,
    *,
    bootstrap: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, dict[str, NodeResult]]:
    """One tree per annotator kind (``human``, ``llm``, ``reference``, …): kind →
    application → root. Each tree holds that kind's labels and every questionnaire
    answer, so labels of different kinds are never pooled into one node."""
    return {
        kind: score_tree(
            spec,
            leaves.for_annotator_kind(kind),
            bootstrap=bootstrap,
            seed=seed,
            confidence=confidence,
        )
        for kind in leaves.annotator_kinds()
    }


def dialogues_under(
    spec: TreeSpec, leaves: LeafTable, node_id: str, application: str
) -> tuple[str, ...]:
    """The dialogue ids whose leaves feed ``node_id`` for ``application`` (sorted)."""
    position = spec.position(node_id)
    prepared = PreparedLeaves(spec, leaves)
    evaluator = TreeEvaluator(prepared, prepared.application, len(leaves.application.categories))
    unit = leaves.application.code_of(application)
    if unit is None:
        return ()
    return _dialogues_of(evaluator, position).get(unit, ())


@dataclass(frozen=True)
class DialogueScores:
    """Node values per dialogue (``values``: dialogues × nodes, NaN where empty)."""

    node_ids: tuple[str, ...]
    dialogue_ids: tuple[str, ...]
    applications: tuple[str, ...]
    values: FloatArray


def score_by_dialogue(
    spec: TreeSpec, leaves: LeafTable, node_ids: Sequence[str] | None = None
) -> DialogueScores:
    """Score the tree for each dialogue on its own (default nodes: the root's dimensions)."""
    ids = tuple(node_ids) if node_ids is not None else dimension_ids(spec)
    prepared = PreparedLeaves(spec, leaves)
    values = TreeEvaluator(prepared, prepared.dialogue, prepared.n_dialogues).evaluate()
    columns = []
    for node_id in ids:
        node_values = values[spec.position(node_id)]
        if node_values is None:
            raise ValueError(f"node '{node_id}' is an aggregation, not a number")
        columns.append(node_values[:, 0])
    return DialogueScores(
        node_ids=ids,
        dialogue_ids=prepared.dialogue_ids,
        applications=tuple(
            leaves.application.categories[int(code)] for code in prepared.dialogue_application
        ),
        values=np.column_stack(columns) if columns else np.zeros((prepared.n_dialogues, 0)),
    )


def dimension_ids(spec: TreeSpec) -> tuple[str, ...]:
    """The root's numeric children when the root is an aggregation, else the root itself."""
    root = spec.root
    if root.is_numeric:
        return (root.id,)
    return tuple(spec.nodes[c].id for c in root.children if spec.nodes[c].is_numeric)


class ScaleDocument(BaseModel):
    min: float
    max: float


class BootstrapDocument(BaseModel):
    replicates: int
    seed: int
    confidence: float


class TreeScores(SetKeysOnly):
    """What ``corix tree score --json`` prints: the tree, its warnings and one scored tree
    per application, pooled (``pooled_annotator_kinds`` and ``applications``) or per
    annotator kind (``annotator_kinds``: kind → application → root)."""

    tree: str
    warnings: list[str]
    title: str
    scale: ScaleDocument
    bootstrap: BootstrapDocument | None
    annotator_kinds: dict[str, dict[str, NodeDocument]] | None = None
    pooled_annotator_kinds: list[str] | None = None
    applications: dict[str, NodeDocument] | None = None


def score_tree_cli_json(
    tree_path: Path | str,
    leaves_csv: Path | str,
    bootstrap: int = 0,
    *,
    seed: int = 0,
    confidence: float = 0.95,
    per_annotator_kind: bool = False,
) -> TreeScores:
    """What ``corix tree score --tree T --leaves L --json`` prints: one tree per application.

    ``tree_path`` may also name a shipped tree (``aria_pilot``, ``ai_rmf``). With
    ``per_annotator_kind``, ``annotator_kinds`` maps each kind to its trees instead;
    without it, ``pooled_annotator_kinds`` lists the kinds whose labels share nodes, so
    pooling is never silent. ``warnings`` lists questions the leaves show are gated but
    the tree does not declare so (see :mod:`corix.measurement.trees.gating_check`).
    """
    spec = load_tree(tree_path)
    leaves = LeafTable.from_csv(leaves_csv)
    header = TreeScores(
        tree=spec.name,
        warnings=[found.message for found in undeclared_gating(spec, leaves)],
        title=spec.title,
        scale=ScaleDocument(min=spec.scale.low, max=spec.scale.high),
        bootstrap=(
            BootstrapDocument(replicates=bootstrap, seed=seed, confidence=confidence)
            if bootstrap
            else None
        ),
    )
    if per_annotator_kind:
        by_kind = score_tree_per_annotator_kind(
            spec, leaves, bootstrap=bootstrap, seed=seed, confidence=confidence
        )
        kinds = {
            kind: {application: root.document() for application, root in results.items()}
            for kind, results in by_kind.items()
        }
        return header.model_copy(update={"annotator_kinds": kinds})
    results = score_tree(spec, leaves, bootstrap=bootstrap, seed=seed, confidence=confidence)
    return header.model_copy(
        update={
            "pooled_annotator_kinds": list(leaves.annotator_kinds()),
            "applications": {application: root.document() for application, root in results.items()},
        }
    )


@dataclass(frozen=True)
class _NodeBounds:
    """A node's interval ends per unit and how each unit's interval was made; for a
    ``max``/``min`` node the bootstrap's estimate of its point value's bias."""

    low: FloatArray
    high: FloatArray
    methods: tuple[str, ...]
    bias: FloatArray | None = None


@dataclass(frozen=True)
class _Intervals:
    """Every node's bounds (``None`` for an aggregation) and its testers per unit."""

    bounds: list[_NodeBounds | None]
    testers: list[IntArray]


def _intervals(
    evaluator: TreeEvaluator,
    point: list[FloatArray | None],
    replicates: int,
    seed: int,
    confidence: float,
) -> _Intervals:
    prepared = evaluator.prepared
    applications = prepared.leaves.application.categories
    strata = [applications[int(a)] for a in prepared.dialogue_application]
    clustered = _clustered_units(prepared.dialogue_testers, prepared.dialogue_application)
    resamples = cluster_resamples(
        prepared.dialogue_keys,
        replicates,
        seed,
        strata=strata,
        testers=prepared.dialogue_testers if clustered.any() else None,
    )
    chunks = [evaluator.evaluate(resample) for resample in resamples]
    series: list[FloatArray | None] = []
    for position, observed in enumerate(point):
        # A numeric node is numeric in every chunk; the filter only narrows the type.
        found = [values for chunk in chunks if (values := chunk[position]) is not None]
        series.append(None if observed is None else np.concatenate(found, axis=1))
    testers = evaluator.tester_counts()
    counts = evaluator.dialogue_counts()
    bounds = _Bounds(
        evaluator.spec, point, series, testers if clustered.any() else None, clustered, counts
    )
    nodes: list[_NodeBounds | None] = []
    for position, values in enumerate(series):
        if values is None:
            nodes.append(None)
            continue
        found_bounds = bounds.at(position, confidence)
        nodes.append(
            _with_extremes(
                evaluator.spec.nodes[position], found_bounds, point, position, counts, confidence
            )
        )
    return _Intervals(nodes, testers)


def _with_extremes(
    node: NodeInstance,
    bounds: _NodeBounds,
    point: list[FloatArray | None],
    position: int,
    counts: list[IntArray],
    confidence: float,
) -> _NodeBounds:
    """``bounds`` where a unit's value sits at an end of the node's range (no defect seen,
    or only defects) reaching at least the corrected Wilson bound for 0 of its n
    dialogues into the range: a bootstrap of identical values is a point, and absence of
    evidence is not evidence of absence. For any mean of n independent values in [0, 1]
    that are all 0, P(all 0) ≤ (1 − μ)ⁿ, so Clopper–Pearson's bound 1 − (α/2)^(1/n)
    holds whatever the values' distribution; corrected Wilson's is wider still."""
    observed = point[position]
    span = node.codomain
    if observed is None or span is None or not math.isfinite(span.width) or span.width <= 0:
        return bounds
    values = observed[:, 0]
    n = counts[position].astype(float)
    at_low = (values == span.low) & (n > 0)
    at_high = (values == span.high) & (n > 0)
    inside = (n > 0) & ~(at_low | at_high)
    bounds = _no_spread_inside(bounds, values, n, inside, span, confidence)
    if not (at_low.any() or at_high.any()):
        return bounds
    reach = np.zeros(len(values))
    _, upper = wilson_cc_arrays(np.zeros(int((n > 0).sum())), n[n > 0], confidence)
    reach[n > 0] = upper * span.width
    low, high = bounds.low.copy(), bounds.high.copy()
    high[at_low] = np.fmax(high[at_low], span.low + reach[at_low])
    low[at_high] = np.fmin(low[at_high], span.high - reach[at_high])
    methods = tuple(
        f"{method}; with no spread seen, at least corrected Wilson's bound for 0 of {int(k)}"
        if edge
        else method
        for method, edge, k in zip(bounds.methods, at_low | at_high, n, strict=True)
    )
    return _NodeBounds(low, high, methods, bounds.bias)


def _no_spread_inside(
    bounds: _NodeBounds,
    values: FloatArray,
    n: FloatArray,
    candidates: npt.NDArray[np.bool_],
    span: Interval,
    confidence: float,
) -> _NodeBounds:
    """A unit whose bootstrap is one point inside the range (every dialogue the same
    value, e.g. two annotators who always split) gets at least corrected Wilson's
    interval for its share at its n dialogues, as a rate whose dialogues do not vary
    does: an unseen spread is not evidence of none."""
    point = candidates & (bounds.high == bounds.low)
    if not point.any():
        return bounds
    share = (values[point] - span.low) / span.width
    wilson_low, wilson_high = wilson_cc_arrays(share, n[point], confidence)
    low, high = bounds.low.copy(), bounds.high.copy()
    low[point] = np.fmin(low[point], span.low + wilson_low * span.width)
    high[point] = np.fmax(high[point], span.low + wilson_high * span.width)
    methods = tuple(
        f"{method}; with no spread seen, at least corrected Wilson's interval at its n"
        if flat
        else method
        for method, flat in zip(bounds.methods, point, strict=True)
    )
    return _NodeBounds(low, high, methods, bounds.bias)


def _clustered_units(testers: Sequence[str], unit: IntArray) -> npt.NDArray[np.bool_]:
    """Per unit (application): whether some tester produced several of its dialogues."""
    n_units = int(unit.max()) + 1 if len(unit) else 0
    clustered = np.zeros(n_units, dtype=bool)
    seen: set[tuple[int, str]] = set()
    for tester, code in zip(testers, unit, strict=True):
        if tester and (int(code), tester) in seen:
            clustered[int(code)] = True
        seen.add((int(code), tester))
    return clustered


class _Bounds:
    """Interval ends per node at any confidence, from the nodes' bootstrap replicates.

    A ``max``/``min`` over children takes the max (min) of its children's bounds, each
    child's at level ``1 − α/c`` (Bonferroni over its ``c`` children): when every
    child's interval holds its true value, which happens with probability ≥ 1 − α, the
    max of the lower ends is below the true max and the max of the upper ends above it.
    A percentile bootstrap of the max itself is biased upwards when children are close
    and under-covers. Every other node takes the percentile interval of its replicates,
    or where testers were resampled the rates' interval on its range (corrected Wilson
    at the effective n; the expanded percentile interval for an unbounded range).
    """

    def __init__(
        self,
        spec: TreeSpec,
        point: list[FloatArray | None],
        series: list[FloatArray | None],
        testers: list[IntArray] | None,
        clustered: npt.NDArray[np.bool_],
        counts: list[IntArray],
    ) -> None:
        self.spec = spec
        self.point = point
        self.series = series
        self.testers = testers
        self.clustered = clustered
        self.counts = counts
        self._memo: dict[tuple[int, float], _NodeBounds] = {}

    def at(self, position: int, confidence: float) -> _NodeBounds:
        key = (position, confidence)
        if key not in self._memo:
            self._memo[key] = self._compute(position, confidence)
        return self._memo[key]

    def _bias(self, position: int) -> FloatArray:
        """The bootstrap's bias estimate of a node's point value: the replicates' mean
        less the value on the data (Efron & Tibshirani 1993, §10.2). For a ``max`` of
        close children it is positive: the max of noisy estimates overshoots."""
        values = self.series[position]
        assert values is not None and self.point[position] is not None  # numeric node
        seen = (~np.isnan(values)).sum(axis=1)
        total = np.nansum(values, axis=1)
        mean = np.divide(total, seen, out=np.full(len(total), np.nan), where=seen > 0)
        observed = self.point[position]
        assert observed is not None
        return np.asarray(mean - observed[:, 0], dtype=float)

    def _compute(self, position: int, confidence: float) -> _NodeBounds:
        node = self.spec.nodes[position]
        extreme = isinstance(node.summarizer, Max | Min) and node.question is None
        children = [c for c in node.children if self.series[c] is not None]
        if extreme and len(children) > 1:
            return self._extreme(position, children, confidence)
        values = self.series[position]
        assert values is not None  # only numeric nodes are asked for
        low, high = percentile_interval(values, confidence)
        methods = [f"percentile bootstrap over {resampled_unit(testers=False)}"] * len(low)
        if self.testers is None:
            return _NodeBounds(low, high, tuple(methods))
        tested = resampled_unit(testers=True)
        for unit in np.flatnonzero(self.clustered):
            k = int(self.testers[position][unit])
            found = self._effective_wilson(position, int(unit), k, confidence)
            if found is None:  # an unbounded range: no proportion to read it as
                unit_low, unit_high = expanded_percentile_interval(
                    values[unit : unit + 1], confidence, k
                )
                low[unit], high[unit] = unit_low[0], unit_high[0]
                methods[unit] = f"expanded percentile bootstrap over {tested} ({k} testers)"
                continue
            low[unit], high[unit] = found
            methods[unit] = (
                f"bootstrap over {tested} (k = {k}, variance × k/(k−1)), "
                "corrected Wilson at the effective n"
            )
        return _NodeBounds(low, high, tuple(methods))

    def _extreme(self, position: int, children: list[int], confidence: float) -> _NodeBounds:
        """A ``max`` over c children: the max of the children's upper ends at the node's
        level, and of their lower ends at level 1 − α/c (Bonferroni); a ``min`` mirrors it.

        The max misses above only if the true largest child lies above its own upper end
        (probability ≤ α/2), and below only if some child's lower end lies above its true
        value (≤ c · α/(2c)), so it covers with probability ≥ 1 − α whatever the gap
        between the children. Only the side that any child can spoil needs Bonferroni."""
        node = self.spec.nodes[position]
        is_max = isinstance(node.summarizer, Max)
        level = 1 - (1 - confidence) / len(children)
        # Each child's own interval (over testers where drawn): with testers drawn whole,
        # their plain percentile intervals made the max cover only 0.93.
        wide = [self.at(child, level) for child in children]
        plain = [self.at(child, confidence) for child in children]
        pick = np.fmax if is_max else np.fmin
        low = functools.reduce(pick, [part.low for part in (wide if is_max else plain)])
        high = functools.reduce(pick, [part.high for part in (plain if is_max else wide)])
        method = (
            f"{node.summarizer_name} of the children's intervals ("
            f"{'lower' if is_max else 'upper'} ends Bonferroni at {level:.2%}, "
            f"{'upper' if is_max else 'lower'} ends at {confidence:.0%})"
        )
        return _NodeBounds(low, high, (method,) * len(low), self._bias(position))

    def _effective_wilson(
        self, position: int, unit: int, testers: int, confidence: float
    ) -> tuple[float, float] | None:
        """The rates' interval on the node's range: its value as a share q of the range,
        the bootstrap variance over testers times k/(k−1), corrected Wilson at the
        effective n = q(1−q)/variance (Korn & Graubard 1998). A percentile interval of
        a skewed bootstrap over few testers under-covers rare risks (0.89 at 6 testers
        and a base rate of 0.1); Wilson's form follows the skew."""
        span = self.spec.nodes[position].codomain
        values, observed = self.series[position], self.point[position]
        if span is None or not math.isfinite(span.width) or span.width <= 0:
            return None
        assert values is not None and observed is not None  # a numeric node
        share = float((observed[unit, 0] - span.low) / span.width)
        drawn = values[unit][~np.isnan(values[unit])] / span.width
        variance = float(np.var(drawn, ddof=1)) if len(drawn) > 1 else 0.0
        variance *= testers / (testers - 1) if testers > 1 else 1.0
        dialogues = float(self.counts[position][unit])
        spread = share * (1 - share)
        effective = spread / variance if variance > 0 and spread > 0 else dialogues
        low, high = wilson_cc_bounds(min(max(share, 0.0), 1.0), max(effective, 1e-9), confidence)
        return span.low + low * span.width, span.low + high * span.width


def _dialogues_of(evaluator: TreeEvaluator, position: int) -> dict[int, tuple[str, ...]]:
    prepared = evaluator.prepared
    where = prepared.positions(evaluator.node_groups[position])
    dialogues = np.unique(prepared.dialogue[where])
    by_unit: dict[int, list[str]] = {}
    for code in dialogues:
        unit = int(prepared.dialogue_application[code])
        by_unit.setdefault(unit, []).append(prepared.dialogue_ids[int(code)])
    return {unit: tuple(ids) for unit, ids in by_unit.items()}


def _dialogues_per_node(evaluator: TreeEvaluator) -> list[dict[int, tuple[str, ...]]]:
    return [_dialogues_of(evaluator, p) for p in range(len(evaluator.spec.nodes))]


def _provenance_of(evaluator: TreeEvaluator, position: int) -> dict[int, NodeProvenance]:
    """Per unit: the annotators whose labels feed the node, and how many questionnaire
    respondents answered under it."""
    prepared = evaluator.prepared
    leaves = prepared.leaves
    rows = prepared.rows[prepared.positions(evaluator.node_groups[position])]
    labelled = leaves.source.codes[rows] == leaves.source.code_of(LeafSource.ANNOTATION.value)
    found: dict[int, NodeProvenance] = {}
    for unit in np.unique(leaves.application.codes[rows]):
        in_unit = leaves.application.codes[rows] == unit
        labels = np.unique(leaves.annotator.codes[rows[in_unit & labelled]])
        answers = np.unique(leaves.annotator.codes[rows[in_unit & ~labelled]])
        names = (leaves.annotator.categories[int(c)] for c in labels)
        found[int(unit)] = NodeProvenance(
            annotators=tuple(sorted(name for name in names if name)),
            respondents=len(answers),
        )
    return found


def _provenance_per_node(evaluator: TreeEvaluator) -> list[dict[int, NodeProvenance]]:
    return [_provenance_of(evaluator, p) for p in range(len(evaluator.spec.nodes))]


def _assemble(
    spec: TreeSpec,
    unit: int,
    point: list[FloatArray | None],
    counts: list[IntArray],
    intervals: _Intervals | None,
    dialogues: list[dict[int, tuple[str, ...]]] | None,
    provenance: list[dict[int, NodeProvenance]] | None = None,
) -> NodeResult:
    built: list[NodeResult] = []
    for position, node in enumerate(spec.nodes):
        children = tuple(built[c] for c in node.children)
        observed = point[position]
        value: NodeValue
        if observed is None:
            value = tuple(child.value for child in children)
        else:
            value = _number(observed[unit, 0])
        interval = intervals.bounds[position] if intervals is not None else None
        bias = None if interval is None or interval.bias is None else interval.bias[unit]
        built.append(
            NodeResult(
                id=node.id,
                label=node.label,
                summarizer=node.summarizer_name,
                value=value,
                n=int(counts[position][unit]),
                ci_low=_number(interval.low[unit]) if interval is not None else None,
                ci_high=_number(interval.high[unit]) if interval is not None else None,
                interval=_method(interval, unit),
                testers=(
                    int(intervals.testers[position][unit])
                    if intervals is not None and interval is not None
                    else None
                ),
                bias=_number(bias) if bias is not None else None,
                children=children,
                context=node.context,
                dialogues=dialogues[position].get(unit, ()) if dialogues is not None else None,
                provenance=(
                    provenance[position].get(unit, NodeProvenance())
                    if provenance is not None
                    else None
                ),
            )
        )
    return built[-1]


def _method(interval: _NodeBounds | None, unit: int) -> str | None:
    if interval is None or np.isnan(interval.low[unit]):
        return None
    return interval.methods[unit]


def _number(value: np.floating[Any] | float) -> float | None:
    return None if np.isnan(value) else float(value)
