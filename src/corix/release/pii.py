"""Finding personal information in free text: a regex core that always runs, Presidio on top.

The core needs no extra and finds what has a shape or a cue: e-mail addresses, phone
numbers, web and IP (v4 and v6) addresses, payment card numbers (Luhn-checked), street
addresses ("12 Baker Street", "Hauptstraße 5", "8 rue de la Paix"), US social security
and UK national insurance numbers by their shape, dates of birth, passport,
driving-licence and other identity-document numbers after the words that announce them
("born on …", "passport number …"), people named by a cue ("my name is …", "Dr …",
"my sister …"), and every *known term*: the usernames of the record's testers and
annotators, names the team lists, and application names when they are masked. A name that
nothing marks needs a language model: with the ``anonymize`` extra, Presidio (spaCy's
small English model, installed from PyPI) adds people's names (``corix.release.presidio``).
Nothing is ever downloaded at run time.

Detectors only *find*; what replaces a finding is decided by the pseudonymizer, and every
finding is listed for a person to review before a release is written.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "DOCUMENT_NUMBER",
    "LOOKED_FOR",
    "NOT_LOOKED_FOR",
    "Finding",
    "PiiDetector",
    "RegexDetector",
    "merge_findings",
]

LOOKED_FOR: dict[str, str] = {
    "PERSON": "people's names: known to the record, listed, or named by a cue",
    "EMAIL_ADDRESS": "e-mail addresses",
    "PHONE_NUMBER": "phone numbers",
    "STREET_ADDRESS": "street addresses (number and street)",
    "DATE_OF_BIRTH": "dates of birth (a date after a cue such as 'born on')",
    "PASSPORT": "passport numbers (after the word passport)",
    "DRIVING_LICENCE": "driving-licence numbers (after the words that name one)",
    "NATIONAL_ID": "national identity numbers: SSN and NI numbers by shape, others by cue",
    "IP_ADDRESS": "IP addresses (v4 and v6)",
    "CREDIT_CARD": "payment card numbers (Luhn-checked)",
    "URL": "web addresses",
}
"""What the regex core looks for, by entity: the datasheet lists it."""

NOT_LOOKED_FOR = (
    "places other than street addresses (towns, countries, stations: a travel scenario's data)",
    "dates other than dates of birth",
    "ages, job titles, employers, health details and other quasi-identifiers",
    "names nothing marks (no cue, not known, not listed) unless Presidio is used",
    "bank account numbers other than card numbers",
)
"""What no detector of corix looks for: the datasheet says so."""


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
# Not inside a longer dotted number; a full stop after it ends the sentence.
_IPV4 = re.compile(rf"(?<![\d.])(?:{_OCTET}\.){{3}}{_OCTET}(?!\d|\.\d)")
# Candidates only: ipaddress decides, and a time such as 10:30:45 has too few colons.
_IPV6 = re.compile(r"(?<![\w:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")
# Digits in groups, optionally led by + and a country code or an area code in brackets
# (+33 1 73 41 62 20, 07700 900123, +49 30 36993673); or one run of 7 to 15 digits.
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{1,5}(?:[ .-]\d{2,8}){1,5}(?!\w)"
    r"|(?<![\w+])\+?\d{7,15}(?!\w)"
)
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_DATE_LIKE = re.compile(r"^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$")

_UPPER = "A-ZÀ-ÖØ-ÞĀ-Ž"  # Latin Extended-A interleaves cases: Ł and ł both pass
_LOWER = "a-zß-öø-ÿĀ-ž"
NAME_WORD = (
    rf"[{_UPPER}](?:[{_LOWER}]+|(?=['’][{_UPPER}]))"
    rf"(?:(?:['’][{_UPPER}]|-[{_UPPER}]?|[{_UPPER}])[{_LOWER}]+)*"
)
"""A capitalized name: Ada, McDonald, O'Brien, Jean-Luc, Łukasz, Pérez; not the possessive
of "Connor's"."""
_FULL_NAME = rf"{NAME_WORD}(?:\s{NAME_WORD}){{0,2}}"
_RELATIVES = (
    "wife|husband|partner|son|daughter|mother|mum|mom|father|dad|brother|sister|friend|"
    "colleague|boss|manager|neighbou?r|grandmother|grandfather|grandma|grandpa|aunt|uncle|"
    "cousin|fiancée?|girlfriend|boyfriend|flatmate|roommate|landlord|landlady|teacher"
)
# The cue in any case; the name capitalized, as names are written. "I'm" and "this is"
# need two capitalized words: "I'm Sarah Connor", not "I'm Happy".
_NAMED_BY_CUE = re.compile(
    r"\b(?:(?:(?i:my name is|my name's|name's|i am called|i'm called|call me|signed|"
    r"regards,|cheers,|thanks,)\s+"
    rf"|(?i:my|our|his|her|their) (?i:{_RELATIVES}),?\s+"
    r"|(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame)\.?\s+)"
    rf"(?P<name>{_FULL_NAME})"
    rf"|(?i:i'm|i am|this is|it's)\s+(?P<pair>{NAME_WORD}\s{NAME_WORD}))"
)

STREET_SUFFIX = (
    r"(?:Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Drive|Dr|Boulevard|Blvd|Way|Court|Ct|Place|"
    r"Pl|Terrace|Close|Crescent|Square|Sq|Parkway|Pkwy|Highway|Hwy|Row|Gardens|Grove|"
    r"Mews|Walk|Circle|Trail|Alley)\b\.?"
)
STREET_ADDRESS = (
    # 221B Baker Street, 1600 Pennsylvania Avenue NW, 14 Oak Lane, Apt 3
    rf"\b\d{{1,5}}[A-Za-z]?,?\s(?:{NAME_WORD}\s){{1,3}}{STREET_SUFFIX}"
    r"(?:\s(?:NW|NE|SW|SE|N|S|E|W)\b)?"
    r"(?:,?\s(?:Apt|Apartment|Flat|Unit|Suite)\.?\s?[0-9A-Za-z]{1,5}\b)?"
    # Hauptstraße 12, Kirchweg 3a
    r"|\b[A-Z][a-zäöüß]+(?:straße|strasse|str\.|weg|gasse|platz|allee|damm|ring)"
    r"\s\d{1,4}[a-z]?\b"
    # 8 rue de la Paix, 12 Via Roma, 5 Calle Mayor
    r"|\b\d{1,4},?\s(?:rue|avenue|boulevard|place|chemin|via|viale|calle|avenida|plaza)\s"
    rf"(?:(?:de la|de l'|du|des|de|del|della|di)\s?)?{NAME_WORD}(?:\s{NAME_WORD}){{0,2}}"
)
"""A street address: the Presidio detector registers the same pattern."""

_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?"
)
DATE = (
    r"\b(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s(?:of\s)?{_MONTH},?\s\d{{4}}"
    rf"|{_MONTH}\s\d{{1,2}}(?:st|nd|rd|th)?,?\s\d{{4}})\b"
)
"""A calendar date written out: the Presidio detector registers the same pattern."""

DOCUMENT_NUMBER = (
    r"\b(?=[A-Z]*\d)(?=(?:[A-Z0-9][ -]?){5})[A-Z0-9]{1,20}(?:[ -][A-Z0-9]{1,12}){0,4}\b"
)
"""A document number: capitals and digits, five at least, a digit in the first group,
maybe in groups (D123-4567-8901)."""

SSN = r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b"
NINO = r"\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b"
"""US social security and UK national insurance numbers by their shape."""

# A cue, then up to four words of filler ("I was born in Leeds on …", "passport number
# is …"), then the identifier. Cues in any case; the identifier as written.
_FILLER = r"(?:[^\w\n]{1,3}[\w']+){0,4}?[^\w\n]{1,3}"
_CUED: tuple[tuple[str, str, str], ...] = (
    ("DATE_OF_BIRTH", r"born|date of birth|birth ?date|dob\b|d\.o\.b|birthday", DATE),
    ("PASSPORT", r"passport", DOCUMENT_NUMBER),
    (
        "DRIVING_LICENCE",
        r"driv(?:ing|er'?s?)[ -]licen[cs]e|licen[cs]e (?:number|no)|dl\b",
        DOCUMENT_NUMBER,
    ),
    (
        "NATIONAL_ID",
        r"(?:social security|ssn|national (?:insurance|id|identity|identification)|ni number|"
        r"nino|id card|identity card|identity number|id number|tax id|tax number|"
        r"personal (?:id|identification) number|citizen (?:id|number)|pesel|bsn|dni|nif|nie|"
        r"aadhaar|sin)\b",
        DOCUMENT_NUMBER,
    ),
)
# The word boundary first: checked once per position, not once per alternative.
_CUED_PATTERNS = [
    (entity, re.compile(rf"\b(?i:{cue}){_FILLER}(?P<id>{shape})")) for entity, cue, shape in _CUED
]
_SHAPED = (
    ("NATIONAL_ID", re.compile(SSN)),
    ("NATIONAL_ID", re.compile(NINO)),
    ("STREET_ADDRESS", re.compile(STREET_ADDRESS)),
)


class RegexDetector:
    """The core detector: shapes, cues and the known terms given."""

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
            self._finding(m, "IP_ADDRESS", 0.9) for m in _IPV6.finditer(text) if _ipv6(m.group())
        ]
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
        for entity, pattern in _SHAPED:
            found += [self._finding(m, entity, 0.85) for m in pattern.finditer(text)]
        for entity, pattern in _CUED_PATTERNS:
            for m in pattern.finditer(text):
                found.append(Finding(m.start("id"), m.end("id"), entity, self.name, 0.9))
        for m in _NAMED_BY_CUE.finditer(text):
            group = "name" if m.group("name") else "pair"
            found.append(Finding(m.start(group), m.end(group), "PERSON", self.name, 0.6))
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


def _ipv6(candidate: str) -> bool:
    if candidate.count(":") < 3 and "::" not in candidate:
        return False
    if sum(char.isalnum() for char in candidate) < 2:
        return False
    try:
        ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    return True


def _luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return len(digits) >= 13 and total % 10 == 0


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
