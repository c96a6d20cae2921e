"""What a release changes in each row: free text redacted, people and (by choice)
applications replaced by pseudonyms. Detection and replacement are deterministic, so the
findings a person reviewed are found again, with the same ids, when the release is written.

Rows are read twice: ``collect`` gathers what the detectors find in every row, ``learn``
takes that set, and ``locate`` then finds each identifier wherever it recurs as well
(``corix.release.recurrence``), so that every occurrence gets the same replacement.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from corix.domain import JsonObject
from corix.release.pii import Finding, PiiDetector, RegexDetector, merge_findings
from corix.release.pseudonyms import Pseudonymizer
from corix.release.recurrence import Identifiers, identity_key

__all__ = ["TEXT_COLUMNS", "Located", "Scrubber", "row_key"]

TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": ("end_detail", "persona"),
    "turns": ("user_text", "response_text", "error", "messages"),
    "questionnaire": ("text",),
    "passes": ("value", "reasoning", "error"),
    "settled_labels": ("value",),
    "resolutions": ("value",),
}
"""The free-text columns of each exported table: everything a person or model wrote."""

_KEY_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": ("session_id",),
    "turns": ("session_id", "turn"),
    "questionnaire": ("session_id", "respondent", "item_id"),
    "passes": ("pass_id", "question_id", "turn"),
    "settled_labels": ("session_id", "annotator", "category", "question_id", "turn", "value"),
    "resolutions": ("session_id", "category", "question_id", "turn"),
}
_APPLICATION_TABLES = ("sessions", "settled_labels")


def row_key(table: str, row: Mapping[str, Any]) -> str:
    """Names one row of ``table`` across runs of the release (as stored, before pseudonyms)."""
    return "/".join("" if row[c] is None else str(row[c]) for c in _KEY_COLUMNS[table])


@dataclass(frozen=True, slots=True)
class Located:
    """A finding in one cell: where it is, what it covers and what replaces it."""

    id: str
    table: str
    row: str
    column: str
    finding: Finding
    text: str
    replacement: str
    context: str


class Scrubber:
    """Finds personal information in rows and writes their released form."""

    def __init__(
        self,
        pseudonyms: Pseudonymizer,
        *,
        usernames: Iterable[str],
        extra_terms: Iterable[tuple[str, str]] = (),
        applications: Iterable[str] = (),
        mask_applications: bool,
        detectors: Sequence[PiiDetector] = (),
    ) -> None:
        self.pseudonyms = pseudonyms
        self.mask_applications = mask_applications
        self._stand_in: dict[str, str] = {}
        terms: list[tuple[str, str]] = []
        for username in usernames:
            terms.append((username, "PERSON"))
            self._stand_in.setdefault(identity_key(username), pseudonyms.person(username))
        terms += list(extra_terms)
        if mask_applications:
            for application in applications:
                terms.append((application, "APPLICATION"))
                self._stand_in.setdefault(
                    identity_key(application), pseudonyms.application(application)
                )
        self._detectors: list[PiiDetector] = [RegexDetector(terms), *detectors]
        self._recurrence = Identifiers().detector()

    def collect(
        self, table: str, row: Mapping[str, Any], identifiers: Identifiers
    ) -> dict[str, list[Finding]]:
        """Add what the detectors find in the free text of ``row`` to ``identifiers``, each
        finding on its own: merged with a neighbour ("licence no. J953"), it would never
        recur. Returns the findings by column."""
        found: dict[str, list[Finding]] = {}
        for column, text in _texts(table, row):
            found[column] = [f for detector in self._detectors for f in detector.find(text)]
            for finding in found[column]:
                identifiers.add(finding, text[finding.start : finding.end])
        return found

    def learn(self, identifiers: Identifiers) -> None:
        """From now on, find every identifier collected wherever it recurs."""
        self._recurrence = identifiers.detector()

    def locate(self, table: str, row: Mapping[str, Any]) -> Iterator[Located]:
        """Every finding in the free text of ``row``, as stored."""
        key = row_key(table, row)
        detectors = [*self._detectors, self._recurrence]
        for column, text in _texts(table, row):
            found = [f for detector in detectors for f in detector.find(text)]
            for finding in merge_findings(found):
                covered = text[finding.start : finding.end]
                entity, replacement = self.replacement(finding.entity, covered)
                ident = f"{table}\0{key}\0{column}\0{finding.start}\0{finding.end}\0{covered}"
                yield Located(
                    id=hashlib.sha256(ident.encode(errors="surrogatepass")).hexdigest()[:16],
                    table=table,
                    row=key,
                    column=column,
                    finding=replace(finding, entity=entity),
                    text=covered,
                    replacement=replacement,
                    context=_context(text, finding),
                )

    def replacement(self, entity: str, text: str) -> tuple[str, str]:
        """The kind and the replacement of ``text``: one per identifier, in every row."""
        entity, key = self._recurrence.identify(text) or (entity, identity_key(text) or text)
        stand_in = self._stand_in.get(key)
        return entity, stand_in or self.pseudonyms.finding(entity, key)

    def released(
        self, table: str, row: Mapping[str, Any], redactions: Sequence[Located]
    ) -> JsonObject:
        """``row`` as released: ``redactions`` applied, people and applications replaced."""
        out = dict(row)
        by_column: dict[str, list[Located]] = {}
        for located in redactions:
            by_column.setdefault(located.column, []).append(located)
        for column, spans in by_column.items():
            text: str = out[column]
            for located in sorted(spans, key=lambda item: item.finding.start, reverse=True):
                start, end = located.finding.start, located.finding.end
                text = text[:start] + located.replacement + text[end:]
            out[column] = text
        if table == "sessions" and out.get("tester"):
            out["tester"] = self.pseudonyms.person(out["tester"])
        if table == "questionnaire" and not out.get("simulated"):
            out["respondent"] = self.pseudonyms.person(out["respondent"])
        if table in ("passes", "settled_labels") and out.get("annotator_kind") == "human":
            out["annotator"] = self.pseudonyms.annotator(out["annotator"])
        if self.mask_applications and table in _APPLICATION_TABLES:
            out["application"] = self.pseudonyms.application(out["application"])
        return out


def _texts(table: str, row: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    for column in TEXT_COLUMNS[table]:
        text = row.get(column)
        if isinstance(text, str) and text:
            yield column, text


def _context(text: str, finding: Finding, width: int = 30) -> str:
    before = text[max(0, finding.start - width) : finding.start]
    after = text[finding.end : finding.end + width]
    return " ".join(f"{before}[{text[finding.start : finding.end]}]{after}".split())
