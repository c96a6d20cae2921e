"""The leaves of a CoRIx tree: one answer per row, stored column by column.

A row is one answer about one dialogue: an annotator's label or a tester's questionnaire
answer. The optional ``annotator`` column names who gave it: the annotator (e.g.
``llm:judge``, ``human:ann1``), or the tester who answered the questionnaire; without it
all answers about a dialogue count as one annotator's. The optional ``wording`` column
holds a questionnaire item's text as asked, so differently worded items that share an id
are never pooled. The optional ``dialogue_key`` names a dialogue stably across reruns (a
plan's work-item key, where ``dialogue_id`` is a fresh session id), so bootstrap
intervals repeat exactly. The optional ``tester`` names who produced the dialogue (the
person, the persona instance, the script): the bootstrap resamples testers first, as
one tester's dialogues are not independent of each other.
Columns are integer-coded categories so that scoring can group a million rows with
NumPy instead of Python loops.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from corix.domain import Level
from corix.errors import CorixError
from corix.measurement.stats import IntArray

RawValue = str | float
C = TypeVar("C", str, RawValue)

REQUIRED_COLUMNS = ("application", "level", "source", "question", "dialogue_id", "value")
OPTIONAL_COLUMNS = ("scenario", "annotator", "wording", "dialogue_key", "tester")


class LeafSource(StrEnum):
    """Who gave an answer: the tree's "annotator labels" vs "user perception" branches."""

    ANNOTATION = "annotation"
    QUESTIONNAIRE = "questionnaire"


class LeafError(CorixError):
    """A leaf row cannot be used; the message names the row and the question."""


@dataclass(frozen=True)
class Categorical(Generic[C]):
    """A column as integer codes into a sorted tuple of distinct values."""

    codes: IntArray
    categories: tuple[C, ...]

    def __len__(self) -> int:
        return len(self.codes)

    def code_of(self, category: C) -> int | None:
        try:
            return self.categories.index(category)
        except ValueError:
            return None

    @staticmethod
    def from_strings(values: Iterable[str]) -> Categorical[str]:
        index: dict[str, int] = {}
        first_seen = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64)
        categories = sorted(index)
        rank = np.empty(len(categories), dtype=np.int64)
        rank[[index[c] for c in categories]] = np.arange(len(categories))
        return Categorical(rank[first_seen], tuple(categories))

    @staticmethod
    def from_array(values: ArrayLike) -> Categorical[RawValue]:
        """Code a NumPy array: numbers stay numbers, anything else becomes text."""
        array = np.asarray(values)
        if array.dtype.kind in "biuf":
            uniques, codes = np.unique(array.astype(np.float64), return_inverse=True)
            numbers: tuple[RawValue, ...] = tuple(float(u) for u in uniques)
            return Categorical(codes.astype(np.int64), numbers)
        uniques, codes = np.unique(array.astype(str), return_inverse=True)
        return Categorical(codes.astype(np.int64), tuple(str(u) for u in uniques))


def annotator_kind(annotator: str) -> str:
    """``human:ann1`` → ``human``: the part before the first colon (all of it without one).

    Annotator names follow ``kind:name`` (``llm:…``, ``human:…``, ``reference:…``) so one
    tree can be scored per kind and kinds are never pooled silently. Rows that name no
    annotator are of kind ``unnamed``.
    """
    return annotator.split(":", 1)[0] or "unnamed"


def _text_column(values: ArrayLike) -> Categorical[str]:
    array = np.asarray(values)
    uniques, codes = np.unique(array.astype(str), return_inverse=True)
    return Categorical(codes.astype(np.int64), tuple(str(u) for u in uniques))


def _raw_text(value: object) -> str:
    # Booleans are yes/no answers; their stored form is the word.
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else str(value).strip()


@dataclass(frozen=True)
class LeafTable:
    """Answers per dialogue, columnar. Build with ``from_rows``, ``from_csv`` or ``from_columns``.

    ``origin`` names where the rows came from in error messages; ``first_line`` is the file
    line of the first row (2 for a CSV file with a header), so errors can give both.
    """

    application: Categorical[str]
    level: Categorical[str]
    source: Categorical[str]
    question: Categorical[str]
    dialogue_id: Categorical[str]
    scenario: Categorical[str]
    annotator: Categorical[str]
    wording: Categorical[str]
    dialogue_key: Categorical[str]
    value: Categorical[RawValue]
    tester: Categorical[str]
    origin: str = "leaves"
    first_line: int | None = None
    columns: frozenset[str] = frozenset((*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS))
    """The columns the source had; a tree filtering on one it lacks is refused."""

    def __post_init__(self) -> None:
        text_columns = (
            self.application,
            self.level,
            self.source,
            self.question,
            self.dialogue_id,
            self.scenario,
        )
        optional = (self.annotator, self.wording, self.dialogue_key, self.tester)
        lengths = {len(self.value)} | {len(column) for column in (*text_columns, *optional)}
        if len(lengths) != 1:
            raise LeafError(f"{self.origin}: columns have different lengths {sorted(lengths)}")
        self._check_vocabulary("level", self.level, [level.value for level in Level])
        self._check_vocabulary("source", self.source, [source.value for source in LeafSource])
        for column in ("application", "question", "dialogue_id"):
            self._check_vocabulary(column, getattr(self, column), None)

    def __len__(self) -> int:
        return len(self.value)

    def take(self, rows: IntArray) -> LeafTable:
        """The rows at ``rows`` (positions), same columns and categories."""

        def pick(column: Categorical[C]) -> Categorical[C]:
            return Categorical(column.codes[rows], column.categories)

        return replace(
            self,
            application=pick(self.application),
            level=pick(self.level),
            source=pick(self.source),
            question=pick(self.question),
            dialogue_id=pick(self.dialogue_id),
            scenario=pick(self.scenario),
            annotator=pick(self.annotator),
            wording=pick(self.wording),
            dialogue_key=pick(self.dialogue_key),
            value=pick(self.value),
            tester=pick(self.tester),
            first_line=None,
        )

    def annotator_kinds(self) -> tuple[str, ...]:
        """The kinds of annotator among the annotation rows, sorted (see :func:`annotator_kind`)."""
        annotation = self.source.code_of(LeafSource.ANNOTATION.value)
        used = np.unique(self.annotator.codes[self.source.codes == annotation])
        return tuple(sorted({annotator_kind(self.annotator.categories[c]) for c in used}))

    def for_annotator_kind(self, kind: str) -> LeafTable:
        """The questionnaire rows plus the annotation rows of annotators of ``kind``."""
        annotation = self.source.code_of(LeafSource.ANNOTATION.value)
        of_kind = np.array(
            [annotator_kind(name) == kind for name in self.annotator.categories], dtype=bool
        )
        keep = (self.source.codes != annotation) | of_kind[self.annotator.codes]
        return self.take(np.flatnonzero(keep))

    def describe_row(self, row: int) -> str:
        """``row`` is 0-based; people read 1-based rows (and file lines, when known)."""
        line = f" (line {row + self.first_line})" if self.first_line is not None else ""
        return f"{self.origin} row {row + 1}{line}"

    def _check_vocabulary(
        self, name: str, column: Categorical[str], allowed: Sequence[str] | None
    ) -> None:
        for code, category in enumerate(column.categories):
            bad = category == "" or (allowed is not None and category not in allowed)
            if bad:
                row = self.describe_row(int(np.flatnonzero(column.codes == code)[0]))
                expected = f"one of {', '.join(allowed)}" if allowed else "a non-empty value"
                raise LeafError(f"{row}: {name} {category!r} is not {expected}")

    @classmethod
    def from_columns(
        cls,
        *,
        application: ArrayLike,
        level: ArrayLike,
        source: ArrayLike,
        question: ArrayLike,
        dialogue_id: ArrayLike,
        value: ArrayLike,
        scenario: ArrayLike | None = None,
        annotator: ArrayLike | None = None,
        wording: ArrayLike | None = None,
        dialogue_key: ArrayLike | None = None,
        tester: ArrayLike | None = None,
        origin: str = "leaves",
    ) -> LeafTable:
        """Build from equal-length arrays; numeric ``value`` arrays keep their numbers."""
        n = len(np.asarray(value))
        optional = {
            "scenario": scenario,
            "annotator": annotator,
            "wording": wording,
            "dialogue_key": dialogue_key,
            "tester": tester,
        }
        return cls(
            application=_text_column(application),
            level=_text_column(level),
            source=_text_column(source),
            question=_text_column(question),
            dialogue_id=_text_column(dialogue_id),
            scenario=_text_column(np.full(n, "") if scenario is None else scenario),
            annotator=_text_column(np.full(n, "") if annotator is None else annotator),
            wording=_text_column(np.full(n, "") if wording is None else wording),
            dialogue_key=_text_column(np.full(n, "") if dialogue_key is None else dialogue_key),
            value=Categorical.from_array(value),
            tester=_text_column(np.full(n, "") if tester is None else tester),
            origin=origin,
            columns=frozenset(REQUIRED_COLUMNS).union(
                name for name, given in optional.items() if given is not None
            ),
        )

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[Mapping[str, object]],
        *,
        origin: str = "leaves",
        first_line: int | None = None,
        header: Iterable[str] | None = None,
    ) -> LeafTable:
        """Build from mappings with the leaf columns (``scenario``, ``annotator``, ``wording``,
        ``dialogue_key`` and ``tester`` optional).

        An optional column counts as present when ``header`` names it, or (without a
        header) when any row has it.
        """
        columns: dict[str, list[str]] = {c: [] for c in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS)}
        present = set(REQUIRED_COLUMNS) | set(header or ())
        for i, row in enumerate(rows):
            if header is None:
                present.update(c for c in OPTIONAL_COLUMNS if c in row)
            missing = [c for c in REQUIRED_COLUMNS if c not in row]
            if missing:
                line = f" (line {i + first_line})" if first_line is not None else ""
                raise LeafError(f"{origin} row {i + 1}{line}: missing {', '.join(missing)}")
            for name, cells in columns.items():
                cells.append(_raw_text(row.get(name)))
        coded = {name: Categorical.from_strings(cells) for name, cells in columns.items()}
        raw_values: tuple[RawValue, ...] = coded["value"].categories
        return cls(
            application=coded["application"],
            level=coded["level"],
            source=coded["source"],
            question=coded["question"],
            dialogue_id=coded["dialogue_id"],
            scenario=coded["scenario"],
            annotator=coded["annotator"],
            wording=coded["wording"],
            dialogue_key=coded["dialogue_key"],
            value=Categorical(coded["value"].codes, raw_values),
            tester=coded["tester"],
            origin=origin,
            first_line=first_line,
            columns=frozenset(present) & frozenset((*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS)),
        )

    @classmethod
    def from_csv(cls, path: Path | str) -> LeafTable:
        """Read a CSV file with a header naming the leaf columns; other columns are ignored."""
        path = Path(path)
        try:
            with path.open(newline="", encoding="utf-8-sig") as handle:  # BOM or not
                reader = csv.DictReader(handle)
                header = reader.fieldnames or []
                missing = [c for c in REQUIRED_COLUMNS if c not in header]
                if missing:
                    raise LeafError(f"{path} line 1: header lacks column(s) {', '.join(missing)}")
                return cls.from_rows(
                    _complete_rows(reader, path), origin=str(path), first_line=2, header=header
                )
        except OSError as exc:
            raise LeafError(f"cannot read {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise LeafError(f"{path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
        except csv.Error as exc:  # e.g. a NUL byte, or a field beyond csv.field_size_limit()
            raise LeafError(f"{path} is not a readable CSV file: {exc}") from None


def _complete_rows(reader: csv.DictReader[str], path: Path) -> Iterable[Mapping[str, object]]:
    for row in reader:
        # DictReader fills short rows with None: a row with too few cells is malformed.
        if any(row.get(c) is None for c in REQUIRED_COLUMNS):
            raise LeafError(f"{path} line {reader.line_num}: too few cells")
        yield row
