"""Questionnaire statistics: item descriptives and group-difference tests.

Works on the raw answers (e.g. Likert 1–5 as given, not mapped onto a tree's scale).

An *item* is an id plus its wording: answers to items that share an id but were worded
differently (e.g. per scenario) are never pooled; such items are keyed ``id~hash`` (see
:func:`item_key`). The leaves' ``wording`` column carries the text as asked.

One tester often answers several sessions, and testers are nested in applications, so
answers are not independent: testing answers as if they were inflates false positives
(0.10–0.18 at nominal 0.05 in simulation). Groups are therefore compared on *tester
means*: each tester's answers to the item within a group are averaged first, and n
counts testers (the leaves' ``annotator`` column names the tester of a questionnaire
row; rows without one count as distinct testers). Groups are compared with
Kruskal–Wallis (effect size epsilon²) and pairwise Mann–Whitney U (effect size:
rank-biserial r), p-values corrected across the pairs with Holm (default) or
Benjamini–Hochberg. :attr:`GroupComparison.method` names the method for reports.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from corix.measurement.stats import FloatArray, IntArray
from corix.measurement.trees import Categorical, LeafError, LeafSource, LeafTable, RawValue

__all__ = [
    "GroupComparison",
    "ItemSummary",
    "PairwiseTest",
    "compare_groups",
    "describe_items",
    "holm_adjust",
    "item_key",
    "questionnaire_items",
]

BoolArray = NDArray[np.bool_]
GroupColumn = Literal["application", "level", "scenario"]
_GROUP_COLUMNS = ("application", "level", "scenario")
Correction = Literal["holm", "bh", "none"]


@dataclass(frozen=True)
class ItemSummary:
    """Descriptives of one item for one application at one level (``sd`` needs n ≥ 2);
    ``wording`` is the item's text as asked, when the leaves carry it."""

    item: str
    application: str
    level: str
    n: int
    mean: float
    median: float
    sd: float | None
    iqr: float
    wording: str = ""


@dataclass(frozen=True)
class PairwiseTest:
    """Mann–Whitney U of ``first`` vs ``second``; ``u`` is ``first``'s statistic.

    ``rank_biserial`` = 2U / (n₁n₂) − 1, in [−1, 1]: positive when ``first`` tends higher.
    """

    first: str
    second: str
    n_first: int
    n_second: int
    u: float
    p_value: float
    p_adjusted: float
    rank_biserial: float


TESTER_MEANS_METHOD = (
    "Kruskal–Wallis and pairwise Mann–Whitney U on tester means (each tester's answers "
    "averaged within a group; n counts testers)"
)


@dataclass(frozen=True)
class GroupComparison:
    """Kruskal–Wallis over ``groups`` (``None`` when undefined) plus pairwise tests.

    ``sizes`` count testers per group (the unit of the tests), ``answers`` the answers
    behind them; ``method`` says how the test was done; ``wording`` is the item's text.
    """

    item: str
    by: GroupColumn
    where: Mapping[str, str]
    groups: tuple[str, ...]
    sizes: tuple[int, ...]
    answers: tuple[int, ...]
    method: str
    h: float | None
    p_value: float | None
    epsilon_squared: float | None
    correction: Correction
    pairwise: tuple[PairwiseTest, ...]
    wording: str = ""


def holm_adjust(p_values: Sequence[float]) -> FloatArray:
    """Holm's step-down adjustment: the i-th smallest p (0-based) times (m − i), kept
    monotone and capped at 1, in the input order."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def _adjust(p_values: Sequence[float], correction: Correction) -> FloatArray:
    if not p_values:
        return np.zeros(0)
    if correction == "holm":
        return holm_adjust(p_values)
    if correction == "bh":
        from scipy import stats  # loaded on use: importing scipy costs about a second

        return np.asarray(stats.false_discovery_control(p_values, method="bh"), dtype=np.float64)
    return np.asarray(p_values, dtype=np.float64)


def _as_number(raw: RawValue) -> float:
    if isinstance(raw, float):
        return raw
    try:
        return float(raw)
    except ValueError:
        return np.nan


def item_key(question: str, wording: str, *, reworded: bool) -> str:
    """An item's key: its id, plus ``~`` and a hash of its wording when ``reworded`` (the
    id was asked in more than one wording)."""
    if not reworded:
        return question
    return f"{question}~{hashlib.sha256(wording.encode()).hexdigest()[:8]}"


class _Answers:
    """The questionnaire rows of a leaf table with their numbers parsed once."""

    def __init__(self, leaves: LeafTable) -> None:
        self.leaves = leaves
        numbers = np.array([_as_number(raw) for raw in leaves.value.categories], dtype=np.float64)
        self.number = numbers[leaves.value.codes] if len(numbers) else np.zeros(0)
        self.questionnaire = _equals(leaves.source, LeafSource.QUESTIONNAIRE.value)
        # Item key → (question code, wording code, whether the key needs the wording).
        self.keys: dict[str, tuple[int, int, bool]] = {}
        rows = np.flatnonzero(self.questionnaire)
        n_wordings = len(leaves.wording.categories)
        pairs = np.unique(leaves.question.codes[rows] * n_wordings + leaves.wording.codes[rows])
        questions, wordings = pairs // n_wordings, pairs % n_wordings
        per_question = np.bincount(questions, minlength=len(leaves.question.categories))
        for question, wording in zip(questions.tolist(), wordings.tolist(), strict=True):
            reworded = bool(per_question[question] > 1)
            key = item_key(
                leaves.question.categories[question],
                leaves.wording.categories[wording],
                reworded=reworded,
            )
            self.keys[key] = (question, wording, reworded)

    def items(self) -> tuple[str, ...]:
        """Questionnaire items whose every answer is a number (text items are left out)."""
        found = []
        for key in sorted(self.keys):
            rows = self._item_mask(key)
            if rows.any() and not np.isnan(self.number[rows]).any():
                found.append(key)
        return tuple(found)

    def _item_mask(self, item: str) -> BoolArray:
        if item not in self.keys:
            return np.zeros(len(self.leaves), dtype=bool)
        question, wording, reworded = self.keys[item]
        mask: BoolArray = self.questionnaire & (self.leaves.question.codes == question)
        if reworded:
            mask &= self.leaves.wording.codes == wording
        return mask

    def wording(self, item: str) -> str:
        """The item's text as asked (``""`` when unknown)."""
        if item not in self.keys:
            return ""
        return self.leaves.wording.categories[self.keys[item][1]]

    def rows(self, item: str, where: Mapping[str, str]) -> BoolArray:
        """Mask of the item's rows that match ``where``; an answer that is no number is an error."""
        mask = self._item_mask(item)
        for column, value in where.items():
            if column not in _GROUP_COLUMNS:
                raise ValueError(f"cannot filter on '{column}'; use {', '.join(_GROUP_COLUMNS)}")
            mask &= _equals(getattr(self.leaves, column), value)
        bad = np.flatnonzero(mask & np.isnan(self.number))
        if len(bad):
            raw = self.leaves.value.categories[self.leaves.value.codes[bad[0]]]
            raise LeafError(
                f"{self.leaves.describe_row(int(bad[0]))}: item '{item}' answer {raw!r} "
                "is not a number"
            )
        return mask


def questionnaire_items(leaves: LeafTable) -> tuple[str, ...]:
    """Keys of the numeric questionnaire items in ``leaves``: the id, or ``id~hash`` per
    wording when one id was asked in several wordings (see :func:`item_key`)."""
    return _Answers(leaves).items()


def describe_items(leaves: LeafTable, items: Sequence[str] | None = None) -> list[ItemSummary]:
    """n, mean, median, sd, IQR of the answers per item × application × level (numeric
    items by default; items are keyed as by :func:`questionnaire_items`)."""
    answers = _Answers(leaves)
    n_levels = len(leaves.level.categories)
    summaries = []
    for item in items if items is not None else answers.items():
        rows = np.flatnonzero(answers.rows(item, {}))
        cell = leaves.application.codes[rows] * n_levels + leaves.level.codes[rows]
        order = np.argsort(cell, kind="stable")
        cells, starts = np.unique(cell[order], return_index=True)
        for code, x in zip(cells, np.split(answers.number[rows[order]], starts[1:]), strict=True):
            q1, median, q3 = np.percentile(x, [25, 50, 75])
            summaries.append(
                ItemSummary(
                    item=item,
                    application=leaves.application.categories[int(code) // n_levels],
                    level=leaves.level.categories[int(code) % n_levels],
                    n=len(x),
                    mean=float(x.mean()),
                    median=float(median),
                    sd=float(x.std(ddof=1)) if len(x) > 1 else None,
                    iqr=float(q3 - q1),
                    wording=answers.wording(item),
                )
            )
    return summaries


def compare_groups(
    leaves: LeafTable,
    item: str,
    *,
    by: GroupColumn,
    where: Mapping[str, str] | None = None,
    correction: Correction = "holm",
) -> GroupComparison:
    """Do answers to ``item`` (a key from :func:`questionnaire_items`) differ between
    applications (or levels, or scenarios)?

    ``where`` restricts the rows first, e.g. ``{"level": "field_testing"}`` to compare
    applications within field testing. The tests run on tester means (see the module
    docstring); a tester who answered in two groups gives one mean to each.
    """
    from scipy import stats  # loaded on use: importing scipy costs about a second

    answers = _Answers(leaves)
    where = dict(where or {})
    mask = answers.rows(item, where)
    column: Categorical[str] = getattr(leaves, by)
    groups: dict[str, FloatArray] = {}
    answered: dict[str, int] = {}
    for code, name in enumerate(column.categories):
        rows = np.flatnonzero(mask & (column.codes == code))
        if len(rows):
            groups[name] = _tester_means(leaves, rows, answers.number[rows])
            answered[name] = len(rows)
    names = tuple(groups)
    pooled = np.concatenate(list(groups.values())) if groups else np.zeros(0)
    h = p = epsilon = None
    if len(groups) >= 2 and np.ptp(pooled) > 0:
        result = stats.kruskal(*groups.values())
        h, p = float(result.statistic), float(result.pvalue)
        epsilon = h / (len(pooled) - 1)
    pairs = list(combinations(names, 2))
    tests = [stats.mannwhitneyu(groups[a], groups[b], alternative="two-sided") for a, b in pairs]
    adjusted = _adjust([float(t.pvalue) for t in tests], correction)
    pairwise = tuple(
        PairwiseTest(
            first=a,
            second=b,
            n_first=len(groups[a]),
            n_second=len(groups[b]),
            u=float(test.statistic),
            p_value=float(test.pvalue),
            p_adjusted=float(adjusted[i]),
            rank_biserial=2 * float(test.statistic) / (len(groups[a]) * len(groups[b])) - 1,
        )
        for i, ((a, b), test) in enumerate(zip(pairs, tests, strict=True))
    )
    return GroupComparison(
        item=item,
        by=by,
        where=where,
        groups=names,
        sizes=tuple(len(x) for x in groups.values()),
        answers=tuple(answered.values()),
        method=TESTER_MEANS_METHOD,
        h=h,
        p_value=p,
        epsilon_squared=epsilon,
        correction=correction,
        pairwise=pairwise,
        wording=answers.wording(item),
    )


def _tester_means(leaves: LeafTable, rows: IntArray, numbers: FloatArray) -> FloatArray:
    """One mean per tester among ``rows``; a row without a tester is a tester of its own."""
    tester = leaves.annotator.codes[rows]
    unnamed = leaves.annotator.code_of("")
    unit = np.where(tester == unnamed, -1 - np.arange(len(rows)), tester)
    _, index = np.unique(unit, return_inverse=True)
    means: FloatArray = np.bincount(index, weights=numbers) / np.bincount(index)
    return means


def _equals(column: Categorical[str], value: str) -> BoolArray:
    code = column.code_of(value)
    if code is None:
        return np.zeros(len(column), dtype=bool)
    matches: BoolArray = column.codes == code
    return matches
