"""The review file: every redaction a release would make, for a person to confirm.

``review.csv`` lists one finding per row with its context and replacement, ``decision``
set to ``redact``. The reviewer may change a decision to ``keep`` (not personal
information) and may add rows of their own: an empty ``id``, the ``text`` to redact
wherever it occurs and, optionally, its ``entity`` (``PERSON`` by default). An identifier
is kept in clear only where every row of its replacement says ``keep``.

The file is opened in a spreadsheet, so a cell a spreadsheet would evaluate is written with
a leading ``'`` (``spreadsheet_safe``) and read back without it.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from corix.config import atomic_open
from corix.errors import ConfigError
from corix.release.scrub import Located
from corix.report import spreadsheet_safe

__all__ = ["DECISIONS", "REVIEW_COLUMNS", "Review", "read_review", "write_review"]

REVIEW_COLUMNS = (
    "id", "table", "row", "column", "entity", "detector", "score", "text", "context",
    "replacement", "decision",
)  # fmt: skip
DECISIONS = ("redact", "keep")


def write_review(path: Path, findings: Iterable[Located]) -> int:
    """Write every finding with the decision ``redact``; return how many."""
    count = 0
    with atomic_open(path, newline="", encoding="utf-8", errors="replace") as handle:
        writer = csv.writer(handle)
        writer.writerow(REVIEW_COLUMNS)
        for located in findings:
            finding = located.finding
            row = [
                located.id,
                located.table,
                located.row,
                located.column,
                finding.entity,
                finding.detector,
                finding.score,
                located.text,
                located.context,
                located.replacement,
                "redact",
            ]
            writer.writerow([spreadsheet_safe(cell) for cell in row])
            count += 1
    return count


@dataclass
class Review:
    """A confirmed review: the decision on every finding and the terms a person added."""

    decisions: dict[str, str] = field(default_factory=dict)
    added: list[tuple[str, str]] = field(default_factory=list)
    redacted_replacements: set[str] = field(default_factory=set)
    """The replacement of every finding decided ``redact``: one per identifier, so an
    identifier redacted anywhere is redacted everywhere."""

    @property
    def kept(self) -> int:
        return sum(decision == "keep" for decision in self.decisions.values())


def read_review(path: Path) -> Review:
    """Read a review file back; a bad row is named by its line and field."""
    review = Review()
    try:
        handle = path.open(newline="", encoding="utf-8-sig")  # a spreadsheet may add a BOM
    except OSError as exc:
        raise ConfigError(f"cannot read the review file: {exc.strerror}", path=path) from None
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("id", "text", "decision") if c not in (reader.fieldnames or ())]
        if missing:
            raise ConfigError(f"missing column '{missing[0]}'", path=path, field=missing[0], line=1)
        for row in reader:
            line = reader.line_num
            decision = (row.get("decision") or "").strip().lower()
            if decision not in DECISIONS:
                raise ConfigError(
                    f"decision must be redact or keep, not {decision!r}",
                    path=path,
                    field="decision",
                    line=line,
                )
            ident = (row.get("id") or "").strip()
            if ident:
                review.decisions[ident] = decision
                if decision == "redact":
                    review.redacted_replacements.add(_cell(row, "replacement"))
            elif decision == "redact":
                text = _cell(row, "text")
                if not text:
                    raise ConfigError(
                        "a row added by hand needs the text to redact",
                        path=path,
                        field="text",
                        line=line,
                    )
                entity = _cell(row, "entity").upper() or "PERSON"
                review.added.append((text, entity))
    return review


def _cell(row: dict[str, str | None], column: str) -> str:
    """A cell as written before ``spreadsheet_safe`` escaped it."""
    value = (row.get(column) or "").strip()
    if value.startswith("'") and spreadsheet_safe(value[1:]) != value[1:]:
        return value[1:]
    return value
