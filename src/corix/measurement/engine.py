"""Vectorized evaluation of a tree over a leaf table.

:class:`PreparedLeaves` maps every answer the tree uses onto its scale once and sorts
the rows into groups of equal (question, level, source, scenario), so a question node's
leaves are a few contiguous slices. :class:`TreeEvaluator` then scores every node for
all *units* (applications, or dialogues) and all bootstrap replicates in one pass:
a question node summarizes a histogram of its distinct response values per unit and
replicate; an inner node summarizes its children's values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from corix.measurement.filters import FILTER_COLUMNS
from corix.measurement.leaves import IntArray, LeafError, LeafTable
from corix.measurement.summarizers import FloatArray, NumericSummarizer, Sample
from corix.measurement.tree_spec import NodeInstance, TreeSpec


@dataclass(frozen=True)
class LeafGroup:
    """Rows sharing question, level, source and scenario: sorted positions ``start:end``."""

    question: str
    level: str
    source: str
    scenario: str
    start: int
    end: int

    def admitted_by(self, node: NodeInstance) -> bool:
        return node.question == self.question and all(
            node.filter.admits(column, getattr(self, column)) for column in FILTER_COLUMNS
        )


class PreparedLeaves:
    """The rows a tree uses, sorted into :class:`LeafGroup` s, answers on the tree's scale.

    Per sorted position: ``rows`` (row in the table), ``application`` and ``dialogue``
    codes, and ``response``: the index of the mapped value among its question's
    ``distinct_values``. Dialogues are coded per (application, dialogue id).
    """

    def __init__(self, spec: TreeSpec, leaves: LeafTable) -> None:
        self.spec = spec
        self.leaves = leaves
        # Only the questions the tree declares, numbered 0..k-1, so the group key stays small.
        declared: list[str] = []
        question_index = np.full(len(leaves.question.categories), -1, dtype=np.int64)
        for code, name in enumerate(leaves.question.categories):
            if name in spec.questions:
                question_index[code] = len(declared)
                declared.append(name)
        per_row = question_index[leaves.question.codes]
        used = np.flatnonzero(per_row >= 0)
        others = (leaves.level, leaves.source, leaves.scenario)
        shape = (max(1, len(declared)), *(max(1, len(c.categories)) for c in others))
        key = np.ravel_multi_index((per_row[used], *(c.codes[used] for c in others)), shape)
        if np.prod(shape) <= np.iinfo(np.uint16).max:
            key = key.astype(np.uint16)  # NumPy's stable sort is a linear radix sort here
        order = np.argsort(key, kind="stable")
        self.rows: IntArray = used[order]
        sorted_key = key[order].astype(np.int64)
        starts = np.flatnonzero(np.diff(sorted_key, prepend=-1))
        ends = np.r_[starts[1:], len(sorted_key)]
        q, level, source, scenario = np.unravel_index(sorted_key[starts], shape)
        self.groups = tuple(
            LeafGroup(
                question=declared[q[g]],
                level=leaves.level.categories[level[g]],
                source=leaves.source.categories[source[g]],
                scenario=leaves.scenario.categories[scenario[g]],
                start=int(starts[g]),
                end=int(ends[g]),
            )
            for g in range(len(starts))
        )
        self.application: IntArray = leaves.application.codes[self.rows]
        self.response: IntArray = np.zeros(len(self.rows), dtype=np.int64)
        self.distinct_values: dict[str, FloatArray] = {}
        self._map_answers()

    @cached_property
    def _dialogue_coding(self) -> tuple[IntArray, IntArray]:
        # Dialogues are needed for bootstrap and per-dialogue scores only: coded on demand.
        n_ids = len(self.leaves.dialogue_id.categories)
        pair = self.application * n_ids + self.leaves.dialogue_id.codes[self.rows]
        pairs, dialogue = np.unique(pair, return_inverse=True)
        return pairs, dialogue

    @property
    def dialogue(self) -> IntArray:
        """Dialogue code per sorted position."""
        return self._dialogue_coding[1]

    @property
    def dialogue_application(self) -> IntArray:
        """Application code per dialogue."""
        return self._dialogue_coding[0] // len(self.leaves.dialogue_id.categories)

    @cached_property
    def dialogue_ids(self) -> tuple[str, ...]:
        ids = self.leaves.dialogue_id.categories
        return tuple(ids[int(c)] for c in self._dialogue_coding[0] % len(ids))

    @property
    def n_dialogues(self) -> int:
        return len(self._dialogue_coding[0])

    def _map_answers(self) -> None:
        spans: dict[str, tuple[int, int]] = {}
        for group in self.groups:  # a question's groups are adjacent: it leads the sort key
            start, _ = spans.get(group.question, (group.start, group.end))
            spans[group.question] = (start, group.end)
        value = self.leaves.value
        for question, (start, end) in spans.items():
            mapping = self.spec.questions[question]
            codes = value.codes[self.rows[start:end]]
            present = np.flatnonzero(np.bincount(codes, minlength=len(value.categories)))
            mapped = np.empty(len(present))
            for i, code in enumerate(present):
                raw = value.categories[code]
                try:
                    mapped[i] = mapping.map_answer(raw, self.spec.scale)
                except ValueError as exc:
                    row = int(self.rows[start:end][codes == code].min())
                    problem = "has no value" if raw == "" else f"value {raw!r}: {exc}"
                    raise LeafError(
                        f"{self.leaves.describe_row(row)}: question '{question}' {problem} "
                        f"(declared input: {mapping.kind})"
                    ) from None
            distinct, index = np.unique(mapped, return_inverse=True)
            lookup = np.zeros(len(value.categories), dtype=np.int64)
            lookup[present] = index
            self.response[start:end] = lookup[codes]
            self.distinct_values[question] = distinct

    def groups_of(self, node: NodeInstance) -> frozenset[int]:
        """The groups a question node reads (none for an inner node)."""
        return frozenset(g for g, group in enumerate(self.groups) if group.admitted_by(node))

    def positions(self, groups: Sequence[int] | frozenset[int]) -> IntArray:
        spans = [np.arange(self.groups[g].start, self.groups[g].end) for g in sorted(groups)]
        return np.concatenate(spans) if spans else np.zeros(0, dtype=np.int64)


class TreeEvaluator:
    """Scores every node of a tree for every unit.

    ``units`` gives each sorted position's unit code (``prepared.application`` or
    ``prepared.dialogue``); a unit is what a result is reported for.
    """

    def __init__(self, prepared: PreparedLeaves, units: IntArray, n_units: int) -> None:
        self.prepared = prepared
        self.spec = prepared.spec
        self.units = units
        self.n_units = n_units
        self.node_groups: list[frozenset[int]] = []
        for node in self.spec.nodes:
            if node.question is not None:
                self.node_groups.append(prepared.groups_of(node))
            else:
                self.node_groups.append(
                    frozenset().union(*(self.node_groups[c] for c in node.children))
                )
        self._dialogue_histograms: dict[int, sparse.csr_array] = {}

    def evaluate(self, resample: FloatArray | None = None) -> list[FloatArray | None]:
        """Each node's values, shape ``units × replicates`` (``None`` for an aggregation).

        Without ``resample`` there is one replicate: the data as observed. ``resample``
        (dialogues × replicates) says how often each dialogue is drawn in each replicate.
        """
        replicates = 1 if resample is None else resample.shape[1]
        empty = np.full((self.n_units, replicates), np.nan)
        values: list[FloatArray | None] = []
        for position, node in enumerate(self.spec.nodes):
            if not isinstance(node.summarizer, NumericSummarizer):
                values.append(None)
                continue
            if node.question is not None:
                sample = self._responses(position, node.question, node, resample)
            else:
                sample = self._children(node, [values[c] for c in node.children])
            values.append(empty if sample is None else node.summarizer.summarize(sample))
        return values

    def leaf_counts(self) -> list[IntArray]:
        """Per node, the number of leaves under it per unit (leaves under two paths count once)."""
        group_of_position = np.repeat(
            np.arange(len(self.prepared.groups)),
            [group.end - group.start for group in self.prepared.groups],
        )
        per_group = np.bincount(
            group_of_position * self.n_units + self.units,
            minlength=len(self.prepared.groups) * self.n_units,
        ).reshape(len(self.prepared.groups), self.n_units)
        return [
            per_group[sorted(groups)].sum(axis=0) if groups else np.zeros(self.n_units, np.int64)
            for groups in self.node_groups
        ]

    def _responses(
        self, position: int, question: str, node: NodeInstance, resample: FloatArray | None
    ) -> Sample | None:
        distinct = self.prepared.distinct_values.get(question)
        if distinct is None or not self.node_groups[position]:
            return None
        k = len(distinct)
        if resample is None:
            where = self.prepared.positions(self.node_groups[position])
            cell = self.units[where] * k + self.prepared.response[where]
            counts = np.bincount(cell, minlength=self.n_units * k).astype(np.float64)
            multiplicity = counts.reshape(self.n_units, 1, k)
        else:
            histogram = self._dialogue_histogram(position, k)
            drawn = histogram.T @ resample  # (units·k) × replicates
            multiplicity = drawn.reshape(self.n_units, k, -1).transpose(0, 2, 1)
        return Sample(
            values=distinct[None, None, :],
            multiplicity=multiplicity,
            weights=np.ones(k),
            codomain=node.items_codomain,
            scale=self.spec.scale,
        )

    def _dialogue_histogram(self, position: int, k: int) -> sparse.csr_array:
        """Responses per dialogue (rows) and (unit, value) cell (columns), kept across chunks."""
        if position not in self._dialogue_histograms:
            where = self.prepared.positions(self.node_groups[position])
            cell = self.units[where] * k + self.prepared.response[where]
            self._dialogue_histograms[position] = sparse.csr_array(
                (np.ones(len(where)), (self.prepared.dialogue[where], cell)),
                shape=(self.prepared.n_dialogues, self.n_units * k),
            )
        return self._dialogue_histograms[position]

    def _children(self, node: NodeInstance, children: list[FloatArray | None]) -> Sample | None:
        if not children:
            return None
        # compile_tree guarantees a numeric node has numeric children only.
        stacked = np.stack([child for child in children if child is not None], axis=-1)
        present = ~np.isnan(stacked)
        return Sample(
            values=np.where(present, stacked, 0.0),
            multiplicity=present.astype(np.float64),
            weights=np.asarray(node.weights, dtype=np.float64),
            codomain=node.items_codomain,
            scale=self.spec.scale,
        )
