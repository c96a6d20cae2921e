"""What the assistant knows about one scenario: the packet's statements, indexed for retrieval."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from corix.apps.demo.reading import ContextReader
from corix.apps.demo.words import content_terms, stem
from corix.scenarios import Decoy, ScenarioPack, Statement, tokenize

MAX_STATEMENTS = 3  # an answer quotes at most this many statements
_RELATIVE_CUTOFF = 0.5  # an answer uses statements scoring at least this share of the best
_MIN_COVERAGE = 0.5  # the best match must hold this share of the question's known words
_ASKED_BOOST = 10.0  # a statement about the episode (etc.) the user named outranks word overlap


@dataclass(frozen=True)
class Entry:
    """One packet statement with its content terms; ``order`` keeps ties in packet order."""

    statement: Statement
    terms: frozenset[str]
    order: int

    @property
    def decoy(self) -> bool:
        return isinstance(self.statement, Decoy)


@dataclass(frozen=True)
class Match:
    entry: Entry
    score: float
    coverage: float  # the share of the question's known words the statement holds
    asked: bool  # about the episode (or other tag value) the user named


def covers(matches: Sequence[Match]) -> bool:
    """Whether the best match answers the question rather than brushing against it."""
    return bool(matches) and (matches[0].asked or matches[0].coverage >= _MIN_COVERAGE)


def top(matches: Sequence[Match]) -> list[Match]:
    """The matches scoring close enough to the best to belong in the answer."""
    if not matches:
        return []
    return [m for m in matches if m.score >= _RELATIVE_CUTOFF * matches[0].score]


class Knowledge:
    """A pack's statements indexed for retrieval, plus readers for its context parameters."""

    def __init__(self, pack: ScenarioPack) -> None:
        self.pack = pack
        self.packet = pack.packet
        self.entries = [
            Entry(statement, self._terms(statement), order)
            for order, statement in enumerate(self.packet.statements)
        ]
        document_frequency: dict[str, int] = {}
        for entry in self.entries:
            for term in entry.terms:
                document_frequency[term] = document_frequency.get(term, 0) + 1
        total = len(self.entries)
        self.weight = {t: math.log(1 + total / df) for t, df in document_frequency.items()}
        fact_terms = {t for e in self.entries if not e.decoy for t in e.terms}
        self.fact_terms = frozenset(fact_terms)
        self.decoy_only_terms = frozenset(set(self.weight) - fact_terms)
        self.topic_terms = frozenset(
            {stem(t) for keyword in pack.keywords for t in tokenize(keyword)} | set(self.weight)
        )
        self.reader = ContextReader(self.packet)

    @staticmethod
    def _terms(statement: Statement) -> frozenset[str]:
        words = [statement.text, *statement.markers]
        for value in statement.tags.values():
            words.extend(map(str, value if isinstance(value, list) else [value]))
        return frozenset(content_terms([t for text in words for t in tokenize(text)]))

    def score(self, text_stems: Sequence[str]) -> int:
        """How strongly a message is about this scenario (distinct topic words it uses)."""
        return len(set(text_stems) & self.topic_terms)

    def rank(
        self, query: set[str], asked: Mapping[str, set[int]], *, with_decoys: bool
    ) -> list[Match]:
        """Statements sharing words with the question (or about what it asked), best first.

        Without decoys, a question using a word that only decoys contain is about something
        no fact covers, and matches nothing.
        """
        if not with_decoys and query & self.decoy_only_terms:
            return []
        known = query & (self.weight.keys() if with_decoys else self.fact_terms)
        total = sum(self.weight[t] for t in known)
        matches = []
        for entry in self.entries:
            if entry.decoy and not with_decoys:
                continue
            overlap = sum(self.weight[t] for t in known & entry.terms)
            named = any(entry.statement.tags.get(tag) in values for tag, values in asked.items())
            score = overlap + (_ASKED_BOOST if named else 0.0)
            if score > 0:
                matches.append(Match(entry, score, overlap / total if total else 0.0, named))
        matches.sort(key=lambda m: (-m.score, m.entry.order))
        return matches
