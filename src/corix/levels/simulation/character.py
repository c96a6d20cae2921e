"""Telling when a model playing a user has stepped out of its role.

A simulated user's message goes to the application as it is, so anything that is not what
the person would type must be caught first: an empty message, a role label ("User: …"),
an assistant's disclaimer ("As an AI…"), talk about the test or the part being played, or a
passage copied from the persona brief, which the application must never see. The brief's
goal (the target or task description) is exempt: saying what one wants is the point.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

MAX_MESSAGE_CHARS = 8000
_ECHO_WORDS = 8  # this many consecutive words of the brief in a message count as a copy

_ROLE_LABEL = re.compile(
    r"^\s*[\[(*]*\s*(?:user|assistant|system|human|ai|bot|model|simulator|simulated user|"
    r"persona|tester|red teamer)\s*[\])*]*\s*:",
    re.IGNORECASE,
)
_AI_DISCLAIMER = re.compile(
    r"\b(?:as an ai\b|as a (?:large )?language model|i(?:'m| am) (?:just )?an ai\b|"
    r"i(?:'m| am) (?:a |an )?(?:large )?language model|i(?:'m| am) an ai (?:language model|"
    r"assistant)|i(?:'m| am) (?:only |just )?a (?:chat ?bot|virtual assistant))",
    re.IGNORECASE,
)
_REFUSES_TO_PLAY = re.compile(
    r"\bi (?:can(?:no|')t|won't|will not|am not able to|'m not able to) "
    r"(?:role-?play|pretend to be|play (?:this|that) (?:role|part|character)|"
    r"help (?:you )?(?:to )?(?:test|jailbreak|attack)|assist with (?:this|that) request)",
    re.IGNORECASE,
)
_META_TALK = re.compile(
    r"[(\[]ooc[)\]]|\b(?:simulated user|out of character|my persona|the persona|"
    r"my (?:system )?prompt|my instructions say|as instructed|"
    r"(?:here is|here's) (?:my|the|a) (?:next |first |opening |follow-up )?(?:message|reply|"
    r"response)|i will now (?:write|send)|playing the (?:role of the )?(?:user|tester))",
    re.IGNORECASE,
)
_PROTOCOL_TAG = re.compile(r"<\s*/?\s*(?:assistant_reply|example)\s*>", re.IGNORECASE)
"""corix's own delimiters (around the application's reply and the persona's examples): a
small model sometimes copies them into its message."""
_LETTER = re.compile(r"[^\W\d_]")
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def strip_protocol_tags(message: str) -> tuple[str, int]:
    """``message`` without corix's delimiter tags, and how many were removed."""
    stripped, removed = _PROTOCOL_TAG.subn("", message)
    return stripped.strip(), removed


def break_character(
    message: str,
    persona: str,
    *,
    allowed: Iterable[str] = (),
    last_reply: str | None = None,
) -> str | None:
    """Why ``message`` cannot be sent as the persona's message, or ``None`` if it can.

    ``allowed`` are passages of the brief the message may repeat (its goal);
    ``last_reply`` is the application's last reply, which a user would not copy back.
    """
    text = message.strip()
    if not text:
        return "the message is empty"
    if not _LETTER.search(text):
        return "the message has no words"
    if len(text) > MAX_MESSAGE_CHARS:
        return f"the message is longer than {MAX_MESSAGE_CHARS} characters"
    if _ROLE_LABEL.match(text):
        return "the message starts with a speaker label"
    checks = (
        (_AI_DISCLAIMER, "the message speaks as an AI model, not as the user"),
        (_REFUSES_TO_PLAY, "the message refuses to play the user"),
        (_META_TALK, "the message talks about the test or the part being played"),
    )
    for pattern, reason in checks:
        if pattern.search(text):
            return reason
    if copies_brief(text, persona, allowed=allowed):
        return "the message repeats the persona brief"
    if last_reply and not _ngrams(_tokens(last_reply), _ECHO_WORDS).isdisjoint(
        _ngrams(_tokens(text), _ECHO_WORDS)
    ):
        return COPIES_REPLY
    return None


COPIES_REPLY = "the message copies the assistant's reply instead of answering it"
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
MIN_KEPT_WORDS = 3
"""What is left of a message after its copied sentences are cut must say this much."""


def strip_copied(message: str, last_reply: str) -> tuple[str, int]:
    """``message`` without its sentences that copy ``last_reply`` (a run of the reply's
    words), and how many were cut: small models often echo the reply, then ask their own
    question after it."""
    echoed = _ngrams(_tokens(last_reply), _ECHO_WORDS)
    kept, cut = [], 0
    for sentence in _SENTENCE_END.split(message.strip()):
        if echoed.isdisjoint(_ngrams(_tokens(sentence), _ECHO_WORDS)):
            kept.append(sentence)
        else:
            cut += 1
    rest = " ".join(part.strip() for part in kept if part.strip())
    return (rest, cut) if len(_tokens(rest)) >= MIN_KEPT_WORDS else ("", cut)


def copies_brief(
    message: str, brief: str, *, allowed: Iterable[str] = (), words: int = _ECHO_WORDS
) -> bool:
    """Whether ``message`` holds ``words`` consecutive words of ``brief`` not in ``allowed``."""
    return not _quotable(brief, tuple(allowed), words).isdisjoint(_ngrams(_tokens(message), words))


@functools.lru_cache(maxsize=4096)
def _quotable(brief: str, allowed: tuple[str, ...], words: int) -> frozenset[tuple[str, ...]]:
    """The runs of words of ``brief`` a message must not repeat. Cached: every turn of a
    dialogue checks the same brief, and the brief is most of the text checked."""
    grams = _ngrams(_tokens(brief), words)
    for passage in allowed:
        grams -= _ngrams(_tokens(passage), words)
    return frozenset(grams)


def _tokens(text: str) -> list[str]:
    return [token.casefold() for token in _TOKEN.findall(text)]


def _ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}
