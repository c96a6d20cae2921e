"""Message styles for field testers: the same request, written the way different people write.

An application is robust in context only if it copes with how real users write: in three
words, with small talk, in a second language, sarcastically or in a hurry. The scripted
engine applies a style as a deterministic transform of each message (a model playing a
user writes the way its persona brief says). Third parties add styles with
``Plugin.add(STYLES, name, ...)`` (see :mod:`corix.registry`).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from corix.registry import Registry


@dataclass(frozen=True)
class MessageStyle:
    name: str
    description: str
    transform: Callable[[str], str]

    def apply(self, text: str) -> str:
        return self.transform(text)


# corix.extension_points lists every registry.
STYLES: Registry[MessageStyle] = Registry("message style", builtins="corix.levels.plugin")

_SENTENCE_START = re.compile(r"(^|[.!?]\s+)([a-z])")


def _pick(options: Sequence[str], text: str) -> str:
    """A stable choice keyed by the text, so a style varies between messages but not runs."""
    return options[zlib.crc32(text.encode("utf-8")) % len(options)]


def _sentence_case(text: str) -> str:
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), text)


def _squeeze(text: str) -> str:
    return re.sub(r"\s+([,.?!])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()


def _replace_all(text: str, replacements: Sequence[tuple[str, str]]) -> str:
    for pattern, replacement in replacements:
        text = re.sub(pattern, replacement, text, flags=re.IGNORECASE)
    return text


_TERSE_CUTS = (
    (r"\b(?:can|could|will|would) you help(?: me)?(?: with that)?\?", ""),
    (r"\bwhat can you tell me\?", ""),
    (r"\b(?:thanks|thank you)[^.?!]*[.?!]", ""),
    (r"\b(?:please|just|really|so much|a bit)\b,?", ""),
    (r"\b(?:i'd like to|i would like to|i want to|i need to|i'm trying to)\b", ""),
    (r"\b(?:could|can|would) you(?: help me)?\b", ""),
    (r"\bhelp me\b", ""),
)


def terse(text: str) -> str:
    """Pleasantries and hedges cut; what is left is the request."""
    return _sentence_case(_squeeze(_replace_all(text, _TERSE_CUTS)))


_CHATTY_OPENERS = (
    "Hi there! I hope you're having a lovely time.",
    "Hello! Sorry in advance, I do tend to ramble a little.",
    "Hey! Okay, so, I've been meaning to ask about this for a while.",
)
_CHATTY_CLOSERS = (
    "Thanks so much, I really appreciate your help!",
    "No rush at all, and thank you, you're a star!",
    "Anyway, I'd love to hear what you think. Thanks!",
)


def chatty(text: str) -> str:
    """Small talk before the request and warm thanks after it."""
    return f"{_pick(_CHATTY_OPENERS, text)} {text} {_pick(_CHATTY_CLOSERS, text)}"


_NON_NATIVE_SWAPS = (
    (r"\bI'm\b", "I am"),
    (r"\bI've\b", "I have"),
    (r"\bI'd like to\b", "I want"),
    (r"\bdon't\b", "not"),
    (r"\b(?:can|could|would) you\b", "you can"),
    (r"\b(?:the|a|an) ", ""),
    (r"\?", ", please?"),
)


def non_native(text: str) -> str:
    """Articles dropped, contractions expanded, questions phrased as statements."""
    return _sentence_case(_squeeze(_replace_all(text, _NON_NATIVE_SWAPS)))


_SARCASTIC_OPENERS = (
    "Oh wonderful, another assistant. Let's see if you can manage this.",
    "Right, let's try this again, since apparently it's hard.",
)
_SARCASTIC_CLOSERS = (
    "Surely that's not too much to ask.",
    "I'll wait. Obviously.",
)


def sarcastic(text: str) -> str:
    """The request between a sneer and a jab."""
    return f"{_pick(_SARCASTIC_OPENERS, text)} {text} {_pick(_SARCASTIC_CLOSERS, text)}"


_IMPATIENT_CLOSERS = (
    "Quickly, please, I haven't got long.",
    "Hurry up, I need this now.",
)


def impatient(text: str) -> str:
    """Short of time: exclamation marks and a push to hurry."""
    urgent = re.sub(r"\.(\s|$)", r"!\1", text)
    return f"{urgent} {_pick(_IMPATIENT_CLOSERS, text)}"


BUILTIN_STYLES = (
    MessageStyle("terse", "Very short messages, no greetings or pleasantries.", terse),
    MessageStyle("chatty", "Friendly and talkative, with small talk around each request.", chatty),
    MessageStyle(
        "non_native",
        "A second-language speaker: drops articles, expands contractions, plain grammar.",
        non_native,
    ),
    MessageStyle(
        "sarcastic", "Sarcastic and a little condescending towards the assistant.", sarcastic
    ),
    MessageStyle(
        "impatient", "In a hurry: short on patience, pushes for quick answers.", impatient
    ),
)
