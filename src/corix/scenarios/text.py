"""Text normalisation and phrase search shared by packet checks and the demo applications.

Markers and replies are compared as sequences of normalised word tokens, so a marker matches
only whole words: ``"42 km"`` is found in "about 42 km" but not in "142 km", and punctuation,
case, Unicode width and curly quotes never decide a match.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

OwnerT = TypeVar("OwnerT", bound=Hashable)

_WORD = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` after Unicode compatibility normalisation."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def normalize(text: str) -> str:
    """``text`` as its tokens joined by single spaces: the form markers are written against."""
    return " ".join(tokenize(text))


class PhraseIndex(Generic[OwnerT]):
    """Finds which of many token phrases occur in a token sequence, in one left-to-right pass.

    Phrases are indexed by their first token, so a scan costs one dict lookup per token plus a
    comparison only where a phrase could start. Overlapping phrases are all found.
    """

    def __init__(self) -> None:
        self._by_first: dict[str, list[tuple[tuple[str, ...], OwnerT, str]]] = {}

    def add(self, phrase: str, owner: OwnerT) -> None:
        """Index ``phrase`` (normalised with :func:`tokenize`) as evidence for ``owner``."""
        self.add_tokens(tuple(tokenize(phrase)), owner, label=phrase)

    def add_tokens(self, tokens: tuple[str, ...], owner: OwnerT, *, label: str) -> None:
        """Index an already tokenised phrase; ``label`` is what a match reports."""
        if not tokens:
            raise ValueError(f"phrase {label!r} has no words to match")
        candidates = self._by_first.setdefault(tokens[0], [])
        candidates.append((tokens, owner, label))
        # Longest first, so an owner's most specific phrase is the one reported.
        candidates.sort(key=lambda candidate: -len(candidate[0]))

    def find(self, tokens: Sequence[str]) -> dict[OwnerT, str]:
        """Each owner with a phrase in ``tokens``, mapped to the first phrase found for it.

        Owners come in the order their phrases start in ``tokens``.
        """
        found: dict[OwnerT, str] = {}
        for start, token in enumerate(tokens):
            candidates = self._by_first.get(token)
            if candidates is None:
                continue
            for phrase, owner, label in candidates:
                if owner in found:
                    continue
                end = start + len(phrase)
                if len(phrase) == 1 or tuple(tokens[start:end]) == phrase:
                    found[owner] = label
        return found
