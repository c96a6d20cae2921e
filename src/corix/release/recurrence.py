"""Identifiers found anywhere in a release, found again wherever they recur.

A detector finds "Sarah Connor" where she introduces herself; three turns later the reply
says "Sure, SARAH!" and nothing marks it. So a release is read twice: the first pass
collects every identifier any detector found (a small set, however large the release), the
second finds each of them wherever it recurs, and all occurrences get the identifier's one
pseudonym.

What counts as the same identifier: the same letters and digits in any case, whatever
separates them ("Sarah Connor", "SARAH CONNOR", "sarah connor"; "+41 44 668 18 00" and
"+41446681800"; "D123-4567-8901" and "D12345678901"), followed by anything ("Sarah
Connor's"). A person's name of several words is also found by each of its words alone, in
any case ("Sarah", "CONNOR", "connor's"), with the whole name's pseudonym; a word shared by
two found names gets a pseudonym of its own, so it links to neither. The price is paid in
ordinary words that are also names: with "Will Smith" found, every "will" is redacted too,
and listed in the review.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from corix.release.pii import Finding

__all__ = ["Identifiers", "RecurrenceDetector", "identity_key"]

_TOKEN = re.compile(r"[^\W_]+")
_POSSESSIVE = re.compile(r"['’]s$")
_MIN_KEY = 2
_NAME_ENTITIES = frozenset({"PERSON"})
_TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame"})


def identity_key(text: str) -> str:
    """The letters and digits of ``text``, case folded: what makes two spellings one."""
    return "".join(_TOKEN.findall(text)).casefold()


@dataclass(frozen=True, slots=True)
class _Known:
    entity: str
    canonical: str  # the identity key of the whole identifier this one stands for
    score: float


@dataclass(frozen=True, slots=True, order=True)
class _Found:
    score: float
    entity: str
    words: tuple[str, ...]


class Identifiers:
    """Every identifier found in a release, by identity key."""

    def __init__(self) -> None:
        self._found: dict[str, _Found] = {}

    def add(self, finding: Finding, text: str) -> None:
        words = tuple(word.casefold() for word in _TOKEN.findall(text))
        if finding.entity in _NAME_ENTITIES and len(words) > 1 and _POSSESSIVE.search(text):
            words = words[:-1]  # "Connor's" names Connor
        key = "".join(words)
        if len(key) < _MIN_KEY:
            return
        found = _Found(finding.score, finding.entity, words)
        # The strongest finding names the kind, whichever order the rows came in.
        if key not in self._found or found > self._found[key]:
            self._found[key] = found

    def detector(self) -> RecurrenceDetector:
        return RecurrenceDetector(self._found)


class RecurrenceDetector:
    """Finds every recurrence of the identifiers given, in windows of the text's words
    (linear in the text, however many identifiers there are)."""

    name = "recurrence"

    def __init__(self, found: dict[str, _Found]) -> None:
        known: dict[str, _Known] = {}
        owners: dict[str, set[str]] = {}
        for key, item in found.items():
            known[key] = _Known(item.entity, key, item.score)
            if item.entity in _NAME_ENTITIES and len(item.words) > 1:
                for word in item.words:
                    if len(word) >= _MIN_KEY and word not in _TITLES:
                        owners.setdefault(word, set()).add(key)
        for word, names in sorted(owners.items()):
            if word in known and known[word].entity not in _NAME_ENTITIES:
                continue  # another kind's identifier
            # A one-word name found on its own ("Ms Connor") is the whole name's too.
            canonical = next(iter(names)) if len(names) == 1 else word
            score = min(found[name].score for name in names)
            known[word] = _Known("PERSON", canonical, score)
        self._known = known
        self._prefixes = {key[:end] for key in known for end in range(1, len(key) + 1)}

    def identify(self, text: str) -> tuple[str, str] | None:
        """The kind and identity key of the identifier ``text`` stands for, if found."""
        known = self._known.get(identity_key(text))
        return None if known is None else (known.entity, known.canonical)

    def find(self, text: str) -> list[Finding]:
        if not self._known:
            return []
        return [
            Finding(start, end, known.entity, self.name, known.score)
            for start, end, known in self._matches(text)
        ]

    def _matches(self, text: str) -> Iterator[tuple[int, int, _Known]]:
        tokens = [(m.start(), m.end(), m.group().casefold()) for m in _TOKEN.finditer(text)]
        position = 0
        while position < len(tokens):
            longest: tuple[int, _Known] | None = None
            joined = ""
            for last in range(position, len(tokens)):
                joined += tokens[last][2]
                if joined not in self._prefixes:
                    break
                known = self._known.get(joined)
                if known is not None:
                    longest = (last, known)
            if longest is None:
                position += 1
                continue
            last, known = longest
            yield tokens[position][0], tokens[last][1], known
            position = last + 1
