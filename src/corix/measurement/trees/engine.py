"""Vectorized evaluation of a tree over a leaf table.

:class:`PreparedLeaves` maps every answer the tree uses onto its scale once and sorts
the rows into groups of equal (question, level, source, scenario), so a question node's
leaves are a few contiguous slices. :class:`TreeEvaluator` then scores every node for
all *units* (applications, or dialogues) and all bootstrap replicates in one pass:
a question node reduces each dialogue to one value per annotator, then summarizes a
weighted histogram of those values per unit and replicate; an inner node summarizes
its children's values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from corix.measurement.stats import FloatArray, IntArray, Resample
from corix.measurement.trees.compiled import NodeInstance, TreeSpec
from corix.measurement.trees.filters import FILTER_COLUMNS
from corix.measurement.trees.leaves import LeafError, LeafTable
from corix.measurement.trees.summarizers import NumericSummarizer, Sample

if TYPE_CHECKING:
    from scipy import sparse


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


def _require_filtered_columns(spec: TreeSpec, leaves: LeafTable) -> None:
    """A column the tree filters on must be in the leaves: without it, nodes filtering
    on it would be silently empty. The error names the nodes that introduce the filter."""
    for column in FILTER_COLUMNS:
        restricted = [node.filter.allowed(column) is not None for node in spec.nodes]
        if not any(restricted) or column in leaves.columns:
            continue
        inherited = [False] * len(spec.nodes)  # under a parent that already filters on it
        for position, node in enumerate(spec.nodes):
            for child in node.children:
                inherited[child] = inherited[child] or restricted[position]
        top = [
            node.id
            for position, node in enumerate(spec.nodes)
            if restricted[position] and not inherited[position]
        ]
        raise LeafError(
            f"{leaves.origin}: no '{column}' column, but tree '{spec.name}' filters on it "
            f"(node(s) {', '.join(top)}); add the column"
        )


class PreparedLeaves:
    """The rows a tree uses, sorted into :class:`LeafGroup` s, answers on the tree's scale.

    Per sorted position: ``rows`` (row in the table), ``application`` and ``dialogue``
    codes, and ``response``: the index of the mapped value among its question's
    ``distinct_values``. Dialogues are coded per (application, dialogue id).
    """

    def __init__(self, spec: TreeSpec, leaves: LeafTable) -> None:
        _require_filtered_columns(spec, leaves)
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

    @cached_property
    def dialogue_keys(self) -> tuple[str, ...]:
        """A stable, distinct key per dialogue for the bootstrap: ``application/key``, the
        key being the leaves' ``dialogue_key`` (else the dialogue id). Dialogues sharing a
        key (e.g. one work item in two runs) add their id to it."""
        applications = self.leaves.application.categories
        stable = self.leaves.dialogue_key
        # A dialogue's key: the greatest among its rows ("" sorts first, so any key wins).
        key_code = np.zeros(self.n_dialogues, dtype=np.int64)
        np.maximum.at(key_code, self.dialogue, stable.codes[self.rows])
        keys = [
            f"{applications[int(a)]}/{stable.categories[int(code)] or dialogue}"
            for a, dialogue, code in zip(
                self.dialogue_application, self.dialogue_ids, key_code, strict=True
            )
        ]
        seen: dict[str, int] = {}
        for key in keys:
            seen[key] = seen.get(key, 0) + 1
        return tuple(
            key if seen[key] == 1 else f"{key}#{dialogue}"
            for key, dialogue in zip(keys, self.dialogue_ids, strict=True)
        )

    @cached_property
    def dialogue_testers(self) -> tuple[str, ...]:
        """Per dialogue, who produced it (the leaves' ``tester``; the greatest among its
        rows), ``""`` when unknown: such a dialogue is a tester of its own."""
        tester = self.leaves.tester
        code = np.zeros(self.n_dialogues, dtype=np.int64)
        np.maximum.at(code, self.dialogue, tester.codes[self.rows])
        return tuple(tester.categories[int(c)] for c in code)

    @cached_property
    def _label_coding(self) -> tuple[IntArray, IntArray]:
        n_annotators = len(self.leaves.annotator.categories)
        pair = self.dialogue * n_annotators + self.leaves.annotator.codes[self.rows]
        pairs, label = np.unique(pair, return_inverse=True)
        return pairs, label

    @property
    def label(self) -> IntArray:
        """Label code per sorted position: one per (dialogue, annotator)."""
        return self._label_coding[1]

    @property
    def label_dialogue(self) -> IntArray:
        """Dialogue code per label."""
        return self._label_coding[0] // len(self.leaves.annotator.categories)

    @cached_property
    def mapped(self) -> FloatArray:
        """Each sorted position's answer on the tree's scale."""
        mapped = np.empty(len(self.rows))
        for group in self.groups:
            span = slice(group.start, group.end)
            mapped[span] = self.distinct_values[group.question][self.response[span]]
        return mapped

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


@dataclass(frozen=True)
class _QuestionCells:
    """A question node's leaves reduced to one value per (dialogue, annotator) *cell*.

    A cell's value is the mean of that annotator's mapped answers over the dialogue's
    turns and repeated passes. ``share`` is 1 / (the dialogue's number of cells in this
    node), so every dialogue weighs 1 however many annotators labelled it. ``histogram``
    maps cells (rows) onto (unit, distinct value) columns.
    """

    dialogue: IntArray
    share: FloatArray
    distinct: FloatArray
    histogram: sparse.csr_array


class TreeEvaluator:
    """Scores every node of a tree for every unit.

    ``units`` gives each sorted position's unit code (``prepared.application`` or
    ``prepared.dialogue``); a unit is what a result is reported for. The unit of
    measurement is the dialogue: a question node first reduces each dialogue to one value
    (see :class:`_QuestionCells`), then summarizes the dialogues' values.
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
        self._cells: dict[int, _QuestionCells] = {}

    def evaluate(self, resample: Resample | None = None) -> list[FloatArray | None]:
        """Each node's values, shape ``units × replicates`` (``None`` for an aggregation).

        Without ``resample`` there is one replicate: the data as observed. ``resample``
        rows follow ``prepared``'s dialogues.
        """
        replicates = 1 if resample is None else resample.size
        empty = np.full((self.n_units, replicates), np.nan)
        values: list[FloatArray | None] = []
        for position, node in enumerate(self.spec.nodes):
            if not isinstance(node.summarizer, NumericSummarizer):
                values.append(None)
                continue
            if node.question is not None:
                sample = self._responses(position, node, resample)
            else:
                sample = self._children(node, [values[c] for c in node.children])
            values.append(empty if sample is None else node.summarizer.summarize(sample))
        return values

    def dialogue_counts(self) -> list[IntArray]:
        """Per node, the dialogues feeding it per unit (one under two paths counts once)."""
        prepared = self.prepared
        unit_of_dialogue = np.zeros(prepared.n_dialogues, dtype=np.int64)
        unit_of_dialogue[prepared.dialogue] = self.units  # a dialogue lies in one unit
        counts = []
        for groups in self.node_groups:
            present = np.zeros(prepared.n_dialogues, dtype=bool)
            present[prepared.dialogue[prepared.positions(groups)]] = True
            counts.append(np.bincount(unit_of_dialogue[present], minlength=self.n_units))
        return counts

    def tester_counts(self) -> list[IntArray]:
        """Per node, the testers feeding it per unit: the top stage's clusters (a dialogue
        without a tester counts as one of its own)."""
        prepared = self.prepared
        unit_of_dialogue = np.zeros(prepared.n_dialogues, dtype=np.int64)
        unit_of_dialogue[prepared.dialogue] = self.units
        names = [tester or f"\x00{i}" for i, tester in enumerate(prepared.dialogue_testers)]
        _, cluster = np.unique(np.asarray(names, dtype=str), return_inverse=True)
        width = len(names) + 1
        counts = []
        for groups in self.node_groups:
            present = np.zeros(prepared.n_dialogues, dtype=bool)
            present[prepared.dialogue[prepared.positions(groups)]] = True
            pairs = np.unique(unit_of_dialogue[present] * width + cluster[present])
            counts.append(np.bincount(pairs // width, minlength=self.n_units))
        return counts

    def _responses(
        self, position: int, node: NodeInstance, resample: Resample | None
    ) -> Sample | None:
        if not self.node_groups[position]:
            return None
        cells = self._question_cells(position)
        k = len(cells.distinct)
        weight = cells.share[:, None] if resample is None else self._cell_weights(cells, resample)
        drawn = cells.histogram.T @ weight  # (units·k) × replicates
        multiplicity = drawn.reshape(self.n_units, k, -1).transpose(0, 2, 1)
        return Sample(
            values=cells.distinct[None, None, :],
            multiplicity=multiplicity,
            weights=np.ones(k),
            codomain=node.items_codomain,
            scale=self.spec.scale,
        )

    @staticmethod
    def _cell_weights(cells: _QuestionCells, resample: Resample) -> FloatArray:
        """Each cell's weight per replicate: a drawn dialogue brings all its annotators'
        cells, which sum to its draw count (its annotators are not drawn again)."""
        weights: FloatArray = resample.dialogues[cells.dialogue] * cells.share[:, None]
        return weights

    def _question_cells(self, position: int) -> _QuestionCells:
        from scipy import sparse  # loaded on use: importing scipy costs about a second

        if position in self._cells:
            return self._cells[position]
        prepared = self.prepared
        where = prepared.positions(self.node_groups[position])
        # Distinct labels in label order, without sorting the positions.
        present = np.zeros(len(prepared.label_dialogue), dtype=bool)
        present[prepared.label[where]] = True
        labels = np.flatnonzero(present)
        rank = np.cumsum(present) - 1
        cell = rank[prepared.label[where]]
        answers = np.bincount(cell)
        value = np.bincount(cell, weights=prepared.mapped[where]) / answers
        dialogue = prepared.label_dialogue[labels]
        _, node_dialogue = np.unique(dialogue, return_inverse=True)
        share = 1.0 / np.bincount(node_dialogue)[node_dialogue]
        unit = np.zeros(len(labels), dtype=np.int64)
        unit[cell] = self.units[where]
        distinct, value_index = np.unique(value, return_inverse=True)
        k = len(distinct)
        n_cells = len(labels)
        cells = _QuestionCells(
            dialogue=dialogue,
            share=share,
            distinct=distinct,
            histogram=sparse.csr_array(
                (np.ones(n_cells), (np.arange(n_cells), unit * k + value_index)),
                shape=(n_cells, self.n_units * k),
            ),
        )
        self._cells[position] = cells
        return cells

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
