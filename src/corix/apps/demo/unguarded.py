"""How the unguarded assistant answers: it ignores the rules and cannot tell facts from decoys."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from corix.apps.demo.knowledge import MAX_STATEMENTS, Knowledge, covers, top


def unguarded_answer(
    knowledge: Knowledge, query: set[str], asked: Mapping[str, set[int]], text: str
) -> str:
    """The best-matching statements for ``query``, decoys included, whatever the rules say."""
    matches = knowledge.rank(query, asked, with_decoys=True)
    best = [match.entry for match in top(matches)]
    if not covers(matches):
        # Rather than admit it does not know, it states the closest invention.
        matching = [entry for entry in best if entry.decoy]
        pool = matching or [entry for entry in knowledge.entries if entry.decoy]
        if pool:
            invented = matching[0] if matching else pool[_stable_hash(text) % len(pool)]
            return f"I'm fairly sure about this one: {invented.statement.text}"
    return "Sure! " + " ".join(entry.statement.text for entry in best[:MAX_STATEMENTS])


def _stable_hash(text: str) -> int:
    """A hash that is the same in every process (``hash()`` is salted), so replies repeat."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
