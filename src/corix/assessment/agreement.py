"""Agreement between annotators: human–human, human–LLM, LLM–LLM.

Labels are rows of ``(item_id, annotator, value)``, optionally with a ``question_id``.
:func:`compare` sets one side ``a`` against another ``b``; each side is an annotator or a
*group* — a name standing for several annotators. For a group, each item's value is the
group's consensus over its members who labelled the item (majority for nominal values,
lower median for ordinal ones; see :mod:`corix.assessment.stability`), so a group is
compared as if it were one annotator. Items are compared when both sides have a value.

Reported: the exact agreement ratio, the relaxed (±1) ratio for ordinal scales, the
confusion matrix, Cohen's κ (unweighted, and quadratic-weighted for ordinal scales) and
Krippendorff's α (nominal, and ordinal for ordinal scales). A statistic that is undefined
for the data (no items, or a single value used throughout) is ``None``.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import krippendorff
import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from corix.assessment.settling_rules import Value
from corix.assessment.stability import consensus
from corix.config import format_location, jsonl_records, read_config_text, read_csv_rows
from corix.domain import JsonObject
from corix.errors import ConfigError, CorixError, unknown_name

__all__ = [
    "AgreementReport",
    "LabelRow",
    "compare",
    "compare_labels",
    "compare_per_question",
    "krippendorff_alpha",
    "numeric_questions",
    "pairwise_agreement",
    "read_labels",
]

LABEL_COLUMNS = ("item_id", "annotator", "value")
OPTIONAL_LABEL_COLUMNS = ("question_id",)
JSONL_SUFFIXES = (".jsonl", ".ndjson")

# item id → annotator → value
LabelTable = dict[str, dict[str, Value]]


class LabelRow(BaseModel):
    """One annotator's value for one item (and, optionally, one question)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str
    annotator: str
    value: Value
    question_id: str | None = None

    @field_validator("item_id", mode="before")
    @classmethod
    def _item_id_as_text(cls, value: Any) -> Any:
        # JSON files often number their items; an id is compared as text.
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("value", mode="before")
    @classmethod
    def _bool_as_yes_no(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return "yes" if value else "no"
        return value


class AgreementReport(BaseModel):
    """Agreement between side ``a`` and side ``b``, each an annotator or a group."""

    question_id: str | None = None
    a: str
    b: str
    members_a: list[str]
    members_b: list[str]
    ordinal: bool
    n_items: int
    """Items with a value on both sides: the items every statistic below is computed on."""
    items: list[str] = []
    """Their ids, sorted (for a run: ``session`` or ``session#turn``)."""
    n_only_a: int
    n_only_b: int
    n_group_ties: int
    """Compared items where a group's consensus was a tie (broken deterministically)."""
    exact_agreement: float | None
    relaxed_agreement: float | None
    """Share of items whose values differ by at most 1; ordinal scales only."""
    labels: list[Value]
    confusion: list[list[int]]
    """``confusion[i][j]``: items where ``a`` said ``labels[i]`` and ``b`` said ``labels[j]``."""
    cohen_kappa: float | None
    cohen_kappa_quadratic: float | None
    alpha_nominal: float | None
    alpha_ordinal: float | None


# --- reading label files -------------------------------------------------------------------


def read_labels(path: Path) -> list[LabelRow]:
    """Read labels from CSV (columns ``item_id,annotator,value[,question_id]``) or JSONL.

    JSONL files (``.jsonl`` / ``.ndjson``) hold one object per line with the same keys.
    Rows with an empty value are missing labels and are skipped. Errors name the file,
    the line and the field; two labels by one annotator for one item are an error.
    """
    numbered = (
        jsonl_records(read_config_text(path), path)
        if path.suffix in JSONL_SUFFIXES
        else _csv_records(path)
    )
    rows: list[LabelRow] = []
    seen: dict[tuple[str | None, str, str], int] = {}
    for line, record in numbered:
        if record.get("value") in (None, ""):
            continue
        try:
            row = LabelRow.model_validate(record)
        except ValidationError as exc:
            error = exc.errors()[0]
            raise ConfigError(
                error["msg"], path=path, line=line, field=format_location(tuple(error["loc"]))
            ) from None
        key = (row.question_id, row.item_id, row.annotator)
        if key in seen:
            raise ConfigError(
                f"annotator '{row.annotator}' already labelled item '{row.item_id}' "
                f"on line {seen[key]}",
                path=path,
                line=line,
            )
        seen[key] = line
        rows.append(row)
    return rows


def _csv_records(path: Path) -> list[tuple[int, JsonObject]]:
    table = read_csv_rows(path)
    missing = table.missing(LABEL_COLUMNS)
    if missing:
        raise ConfigError(
            f"missing column(s) {', '.join(missing)}; expected {','.join(LABEL_COLUMNS)}",
            path=path,
            line=1,
        )
    wanted = [key for key in (*LABEL_COLUMNS, *OPTIONAL_LABEL_COLUMNS) if key in table.header]
    records = []
    for line, record in table.rows:
        cleaned = {key: record[key].strip() for key in wanted}
        if cleaned.get("question_id") == "":
            cleaned.pop("question_id")
        records.append((line, cleaned))
    return records


# --- comparing -----------------------------------------------------------------------------


def compare(
    rows: Iterable[LabelRow],
    a: str,
    b: str,
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
    ordinal: bool = False,
) -> AgreementReport:
    """Agreement between ``a`` and ``b`` (annotators, or names in ``groups``) on one question.

    ``ordinal`` says the values are ordered numbers (sliders, severities); it enables the
    relaxed ratio, quadratic κ and ordinal α.
    """
    rows = list(rows)
    questions = {row.question_id for row in rows}
    if len(questions) > 1:
        names = sorted(question or "(none)" for question in questions)
        raise CorixError(
            f"the labels cover several questions ({', '.join(names)}); "
            "compare them one at a time with compare_per_question"
        )
    sides = _resolve_sides(rows, a, b, groups or {})
    question_id = rows[0].question_id if rows else None
    return _compare_table(_label_table(rows), sides, question_id=question_id, ordinal=ordinal)


def compare_per_question(
    rows: Iterable[LabelRow],
    a: str,
    b: str,
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
    ordinal_questions: Collection[str] = (),
) -> list[AgreementReport]:
    """One report per ``question_id`` (rows without one form their own), ordered by question.

    Questions in ``ordinal_questions`` are compared as ordinal (for a schema: the ids of
    its questions whose ``is_ordinal`` is true).
    """
    rows = list(rows)
    sides = _resolve_sides(rows, a, b, groups or {})
    by_question: defaultdict[str | None, list[LabelRow]] = defaultdict(list)
    for row in rows:
        by_question[row.question_id].append(row)
    return [
        _compare_table(
            _label_table(by_question[question_id]),
            sides,
            question_id=question_id,
            ordinal=question_id in ordinal_questions,
        )
        for question_id in sorted(by_question, key=lambda q: (q is not None, q or ""))
    ]


def compare_labels(
    rows: Iterable[LabelRow],
    a: str,
    b: str,
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
    question: str | None = None,
    nominal: bool = False,
) -> list[AgreementReport]:
    """Agreement of labels read from a file: of one ``question`` or of each, numbers
    compared as ordinal unless ``nominal``.

    Rows that name their questions get a report per question; rows that do not, one.
    """
    rows = [row for row in rows if question is None or row.question_id == question]
    numeric = set() if nominal else numeric_questions(rows)
    if any(row.question_id for row in rows):
        ordinal_questions = {q for q in numeric if q is not None}
        return compare_per_question(rows, a, b, groups=groups, ordinal_questions=ordinal_questions)
    return [compare(rows, a, b, groups=groups, ordinal=None in numeric)]


def krippendorff_alpha(
    rows: Iterable[LabelRow],
    *,
    ordinal: bool = False,
    annotators: Collection[str] | None = None,
) -> float | None:
    """Krippendorff's α over any number of annotators (all, or ``annotators``).

    Missing labels are allowed: an item contributes the pairs among the annotators who
    labelled it, and items labelled by only one annotator contribute nothing.
    """
    table = _label_table(rows)
    coders = sorted(
        annotators
        if annotators is not None
        else {annotator for labels in table.values() for annotator in labels}
    )
    items = sorted(table)
    data = [
        [
            _comparable(table[item][coder], ordinal) if coder in table[item] else None
            for item in items
        ]
        for coder in coders
    ]
    return _alpha(data, "ordinal" if ordinal else "nominal")


def pairwise_agreement(
    rows: Iterable[LabelRow], *, ordinal: bool = False
) -> tuple[int, float | None]:
    """Items with two or more labels, and the share of agreeing pairs of labels among them.

    Labels compare as :func:`compare` compares them (``3`` = ``3.0``; numbers on an
    ``ordinal`` scale by value).
    """
    agreeing = pairs = items = 0
    for labels in _label_table(rows).values():
        if len(labels) < 2:
            continue
        items += 1
        values = [_comparable(value, ordinal) for value in labels.values()]
        for first, second in combinations(values, 2):
            pairs += 1
            agreeing += first == second
    return items, (agreeing / pairs if pairs else None)


@dataclass(frozen=True)
class _Side:
    """One side of a comparison: its name and the annotators it stands for."""

    name: str
    members: list[str]


def _resolve_sides(
    rows: Sequence[LabelRow], a: str, b: str, groups: Mapping[str, Sequence[str]]
) -> tuple[_Side, _Side]:
    annotators = {row.annotator for row in rows}
    side_a, side_b = (_Side(name, sorted(groups.get(name, [name]))) for name in (a, b))
    for side in (side_a, side_b):
        if not annotators.intersection(side.members):
            raise unknown_name("annotator or group with labels", side.name, [*annotators, *groups])
    overlap = sorted(set(side_a.members) & set(side_b.members))
    if overlap:
        raise CorixError(f"'{a}' and '{b}' share annotators ({', '.join(overlap)})")
    return side_a, side_b


def _label_table(rows: Iterable[LabelRow]) -> LabelTable:
    table: defaultdict[str, dict[str, Value]] = defaultdict(dict)
    for row in rows:
        if row.annotator in table[row.item_id]:
            raise CorixError(
                f"annotator '{row.annotator}' labelled item '{row.item_id}' more than once"
            )
        table[row.item_id][row.annotator] = row.value
    return dict(table)


def _comparable(value: Value, ordinal: bool) -> Value:
    """A value in comparable form: a number on ordinal scales, text otherwise."""
    if ordinal:
        try:
            return float(value)
        except ValueError:
            raise CorixError(f"ordinal values must be numbers, got {value!r}") from None
    number = _as_number(value)
    if number is not None:
        # 3 and 3.0 are the same label; "3" from a CSV file matches 3 from a JSONL file.
        return str(int(number)) if number.is_integer() else str(number)
    return str(value).strip()


def _as_number(value: Value) -> float | None:
    """``value`` as a finite number, or ``None`` when it is a word."""
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def numeric_questions(rows: Iterable[LabelRow]) -> set[str | None]:
    """The questions whose every label is a number: ordinal unless said otherwise."""
    words: set[str | None] = set()
    seen: set[str | None] = set()
    for row in rows:
        seen.add(row.question_id)
        if _as_number(row.value) is None:
            words.add(row.question_id)
    return seen - words


def _side_values(
    table: LabelTable, members: Sequence[str], ordinal: bool
) -> tuple[dict[str, Value], set[str]]:
    """Each item's value for one side (a group's consensus), and the items that were ties."""
    values: dict[str, Value] = {}
    ties: set[str] = set()
    for item, labels in table.items():
        given = [_comparable(labels[m], ordinal) for m in members if m in labels]
        if given:
            summary = consensus(given, ordinal=ordinal)
            values[item] = summary.value
            if summary.tie:
                ties.add(item)
    return values, ties


def _compare_table(
    table: LabelTable, sides: tuple[_Side, _Side], *, question_id: str | None, ordinal: bool
) -> AgreementReport:
    side_a, side_b = sides
    values_a, ties_a = _side_values(table, side_a.members, ordinal)
    values_b, ties_b = _side_values(table, side_b.members, ordinal)
    items = sorted(values_a.keys() & values_b.keys())
    xs = [values_a[item] for item in items]
    ys = [values_b[item] for item in items]
    n = len(items)
    labels = sorted(set(xs) | set(ys), key=_label_order)
    index = {label: i for i, label in enumerate(labels)}
    confusion = [[0] * len(labels) for _ in labels]
    for x, y in zip(xs, ys, strict=True):
        confusion[index[x]][index[y]] += 1
    exact = relaxed = None
    if n:
        exact = sum(x == y for x, y in zip(xs, ys, strict=True)) / n
        if ordinal:
            relaxed = sum(abs(float(x) - float(y)) <= 1 for x, y in zip(xs, ys, strict=True)) / n
    return AgreementReport(
        question_id=question_id,
        a=side_a.name,
        b=side_b.name,
        members_a=side_a.members,
        members_b=side_b.members,
        ordinal=ordinal,
        n_items=n,
        items=items,
        n_only_a=len(values_a.keys() - values_b.keys()),
        n_only_b=len(values_b.keys() - values_a.keys()),
        n_group_ties=len((ties_a | ties_b).intersection(items)),
        exact_agreement=exact,
        relaxed_agreement=relaxed,
        labels=labels,
        confusion=confusion,
        cohen_kappa=_kappa(xs, ys, labels, weighted=False),
        cohen_kappa_quadratic=_kappa(xs, ys, _kappa_scale(labels), weighted=True)
        if ordinal
        else None,
        alpha_nominal=_alpha([xs, ys], "nominal"),
        alpha_ordinal=_alpha([xs, ys], "ordinal") if ordinal else None,
    )


def _label_order(value: Value) -> tuple[int, float, str]:
    number = _as_number(value)
    if number is None:
        return (1, 0.0, str(value))
    return (0, number, "")


_GRID_STEPS = (1, 2, 4, 10)  # whole, half, quarter and tenth points


def _kappa_scale(labels: list[Value]) -> list[Value]:
    """Labels for weighted κ: every point of the values' grid between the extremes.

    scikit-learn weights disagreements by the distance between label *positions*; filling
    in unused points (whole numbers, or half points such as 7.5) keeps that distance
    proportional to the distance between the values.
    """
    numbers = [float(label) for label in labels]
    for step in _GRID_STEPS:
        scaled = [number * step for number in numbers]
        if numbers and all(abs(v - round(v)) < 1e-9 for v in scaled):
            low, high = round(scaled[0]), round(scaled[-1])
            return [v / step for v in range(low, high + 1)]
    return labels


def _kappa(
    xs: list[Value], ys: list[Value], labels: list[Value], *, weighted: bool
) -> float | None:
    # κ is undefined when chance agreement is certain: a single value used throughout.
    if len(set(xs) | set(ys)) < 2:
        return None
    # scikit-learn takes class labels, not measurements: compare positions on the scale.
    position = {label: i for i, label in enumerate(labels)}
    x_codes = [position[x] for x in xs]
    y_codes = [position[y] for y in ys]
    # Imported here: scikit-learn takes seconds to import, and most users of this
    # package (the web app, annotators) never compute κ.
    from sklearn.metrics import cohen_kappa_score

    kappa = cohen_kappa_score(
        x_codes,
        y_codes,
        labels=list(range(len(labels))),
        weights="quadratic" if weighted else None,
    )
    return None if np.isnan(kappa) else float(kappa)


def _alpha(
    data: Sequence[Sequence[Value | None]], level: Literal["nominal", "ordinal"]
) -> float | None:
    """Krippendorff's α for rows = annotators, columns = items, ``None`` = missing."""
    present = sorted({v for row in data for v in row if v is not None}, key=_label_order)
    if len(present) < 2:
        return None  # one value throughout: no disagreement is possible, α is undefined
    if level == "nominal":
        code = {value: float(i) for i, value in enumerate(present)}
        matrix = [[np.nan if v is None else code[v] for v in row] for row in data]
    else:
        matrix = [[np.nan if v is None else float(v) for v in row] for row in data]
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            alpha = krippendorff.alpha(
                reliability_data=np.array(matrix, dtype=float), level_of_measurement=level
            )
        except ValueError:  # no item was labelled by two annotators
            return None
    return None if np.isnan(alpha) else float(alpha)
