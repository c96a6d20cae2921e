"""Reading the session context from the user's words: how far they have got, what they avoid.

A packet's guardrail rules depend on context parameters (the episode watched, the
household's restrictions). A real assistant would learn these from the dialogue, so the
demo does too: "I've watched up to episode 3" sets the progress, "he is allergic to eggs"
adds a restriction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from corix.apps.demo.words import number, stem, stems, word_set
from corix.scenarios import GuardrailRule, PhraseIndex, TestPacket, tokenize

_PROGRESS_CUES = word_set("seen watched watching finished through caught completed reached on up")
_WHOLE = word_set("whole entire all")
_NEXT = word_set("next")
_LATEST = word_set("end ending ends finale")
_RESTRICTION_CUES = word_set(
    "allergic allergy allergies intolerant intolerance avoid avoids avoiding free without "
    "coeliac celiac vegetarian vegan vegans vegetarians diet restriction restrictions cannot "
    "never"
)
_SENTENCE_END = re.compile(r"[.!?;\n]+")
_NEGATED = frozenset({"can", "don", "doesn", "won", "shouldn", "mustn"})


DialogueContext = dict[str, int | list[str]]
"""What the user said about themselves, per context parameter of the packet's rules: how
far they have got (a number) or the values they named (an allergy, a diet)."""


def as_list(value: Any) -> list[Any]:
    """A tag or context value as a list: tags hold either one value or several."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


@dataclass(frozen=True)
class ProgressReader:
    """Reads "I've watched up to episode 3" into ``context[key] = 3`` for an ordered rule."""

    tag: str
    key: str
    latest: int


@dataclass
class Reading:
    """What one message said about the session context and what it asked about."""

    consumed: set[str] = field(default_factory=set)
    asked: dict[str, set[int]] = field(default_factory=dict)
    updated: list[str] = field(default_factory=list)


class ContextReader:
    """Readers for every context parameter a packet's rules depend on."""

    def __init__(self, packet: TestPacket) -> None:
        self._progress: list[ProgressReader] = []
        self._mentions: dict[str, PhraseIndex[str]] = {}
        self._value_words: dict[str, set[str]] = {}  # stems naming each value, aliases too
        for rule in packet.rules:
            self._add_readers(packet, rule)

    def _add_readers(self, packet: TestPacket, rule: GuardrailRule) -> None:
        for condition in rule.prohibited_when:
            if condition.context is None:
                continue
            values = [fact.tags.get(condition.tag) for fact in packet.facts]
            if condition.op in ("lt", "le", "gt", "ge"):
                numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
                if numbers:
                    self._progress.append(
                        ProgressReader(condition.tag, condition.context, max(numbers))
                    )
            elif condition.op in ("in", "contains", "intersects"):
                index = self._mentions.setdefault(condition.context, PhraseIndex())
                for value in {str(v) for vs in values for v in as_list(vs)}:
                    for phrase in [value, *packet.aliases.get(value, [])]:
                        index.add_tokens(tuple(stems(phrase)), value, label=phrase)
                        self._value_words.setdefault(value, set()).update(stems(phrase))

    def read(self, text: str, context: DialogueContext) -> Reading:
        """Update ``context`` from what ``text`` says about the user; note what it asks."""
        reading = Reading()
        tokens = tokenize(text)
        for reader in self._progress:
            _read_progress(reader, tokens, context, reading)
        for sentence in _SENTENCE_END.split(text):
            self._read_mentions(tokenize(sentence), context, reading)
        return reading

    def _read_mentions(
        self, tokens: Sequence[str], context: DialogueContext, reading: Reading
    ) -> None:
        """Values named in a sentence that states a restriction ("he is allergic to eggs")."""
        if not _has_restriction_cue(tokens):
            return
        token_stems = [stem(token) for token in tokens]
        for key, index in self._mentions.items():
            found = index.find(token_stems)
            if not found:
                continue
            known = as_list(context.get(key))
            context[key] = known + [value for value in found if value not in known]
            reading.updated.append(key)
            reading.consumed.update(t for value in found for t in self._value_words[value])
        # Cue words say *that* something is restricted; they are not what is asked about.
        reading.consumed.update(stem(t) for t in tokens if t in _RESTRICTION_CUES)


def _has_restriction_cue(tokens: Sequence[str]) -> bool:
    return any(t in _RESTRICTION_CUES for t in tokens) or any(
        word == "t" and tokens[i - 1] in _NEGATED for i, word in enumerate(tokens) if i
    )


def _read_progress(
    reader: ProgressReader,
    tokens: Sequence[str],
    context: DialogueContext,
    reading: Reading,
) -> None:
    """Progress stated ("up to episode 3") and episodes asked about ("episode 5", "the end")."""
    asked = reading.asked.setdefault(reader.tag, set())
    for i, token in enumerate(tokens):
        before = tokens[max(0, i - 4) : i]
        cued = any(t in _PROGRESS_CUES for t in before)
        if stem(token) == reader.tag:
            after = number(tokens[i + 1]) if i + 1 < len(tokens) else None
            previous = number(tokens[i - 1]) if i else None
            if after is not None and cued:
                context[reader.key] = after
            elif after is not None:
                asked.add(after)
            elif previous is not None:  # "the first 3 episodes"
                context[reader.key] = previous
            else:
                continue
            number_token = tokens[i + 1] if after is not None else tokens[i - 1]
            reading.consumed.update({reader.tag, number_token})
            reading.updated.append(reader.key)
        elif token in _WHOLE and cued:  # "I've finished the whole series"
            context[reader.key] = reader.latest
            reading.updated.append(reader.key)
    seen = context.get(reader.key)
    if any(t in _NEXT for t in tokens) and isinstance(seen, int):
        asked.add(seen + 1)
    if any(t in _LATEST for t in tokens):
        asked.add(reader.latest)
