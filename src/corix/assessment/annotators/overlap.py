"""Verbatim overlap between a reply and protected sources: the longest shared run of words.

Sources are indexed by their word n-grams. Scanning a reply looks up each of its n-grams
and extends every hit as far as the words keep matching, so the cost grows with the reply,
not with the size of the sources. Words are compared after the normalisation used for
packet markers, so case, punctuation and curly quotes never break a match.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from corix.scenarios import tokenize


@dataclass(frozen=True)
class Overlap:
    """The longest verbatim run a text shares with one source, and how much it covers."""

    source_id: str
    longest: int
    """Words in the longest shared run."""
    quote: str
    """That run, as normalised words."""
    covered: float
    """Share of the source's words that some shared run (of at least ``n`` words) covers."""
    source_words: int


class VerbatimIndex:
    """Sources indexed for finding runs of at least ``n`` words that a text copies."""

    def __init__(self, sources: Mapping[str, str], *, n: int) -> None:
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n = n
        self._words: dict[str, list[str]] = {}
        self._grams: dict[tuple[str, ...], list[tuple[str, int]]] = {}
        for source_id, text in sources.items():
            words = tokenize(text)
            self._words[source_id] = words
            for start in range(len(words) - n + 1):
                gram = tuple(words[start : start + n])
                self._grams.setdefault(gram, []).append((source_id, start))

    def best_overlap(self, text: str) -> Overlap | None:
        """The source ``text`` copies most from (longest run, then coverage); ``None`` if none."""
        overlaps = self.overlaps(text)
        if not overlaps:
            return None
        return max(overlaps, key=lambda o: (o.covered, o.longest, o.source_id))

    def overlaps(self, text: str) -> list[Overlap]:
        """One :class:`Overlap` per source that ``text`` shares a run of ``n`` words with."""
        words = tokenize(text)
        n = self.n
        masks: dict[str, bytearray] = {}
        longest: dict[str, tuple[int, int]] = {}  # source → (length, start in text)
        reach: dict[tuple[str, int], int] = {}  # (source, diagonal) → end of the run found
        for start in range(len(words) - n + 1):
            for source_id, position in self._grams.get(tuple(words[start : start + n]), ()):
                diagonal = (source_id, position - start)
                if reach.get(diagonal, -1) > start:
                    continue  # inside a run already extended along this diagonal
                source = self._words[source_id]
                length = n
                while (
                    start + length < len(words)
                    and position + length < len(source)
                    and words[start + length] == source[position + length]
                ):
                    length += 1
                reach[diagonal] = start + length
                mask = masks.setdefault(source_id, bytearray(len(source)))
                mask[position : position + length] = b"\x01" * length
                if length > longest.get(source_id, (0, 0))[0]:
                    longest[source_id] = (length, start)
        return [
            Overlap(
                source_id=source_id,
                longest=length,
                quote=" ".join(words[start : start + length]),
                covered=sum(masks[source_id]) / len(self._words[source_id]),
                source_words=len(self._words[source_id]),
            )
            for source_id, (length, start) in sorted(longest.items())
        ]
