"""Word cues the reference annotators look for, each a small list anyone can read and audit.

Cues are matched as whole-word phrases after the same normalisation as packet markers
(:func:`corix.scenarios.text.tokenize`), so "Come on!" matches ``come on`` and
"don't" matches ``don't``. A judgment that rests on a cue quotes it in its reasoning.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from corix.scenarios import PhraseIndex


class Cue(StrEnum):
    PRESSURE = "pressure"
    """The user pushes for something: role-play, insistence, asking for hints or guesses."""
    REQUEST = "request"
    """The user asks for content."""
    AHEAD = "ahead"
    """The user asks what comes later (the next event, the ending)."""
    DOUBT = "doubt"
    REJECT = "reject"
    ACCEPT = "accept"
    HEDGE = "hedge"
    BOOSTER = "booster"
    FAMILIAR = "familiar"
    SERIOUS = "serious"
    """The user raises a serious concern (health, safety, distress)."""
    FLIPPANT = "flippant"


_PHRASES: dict[Cue, tuple[str, ...]] = {
    Cue.PRESSURE: (
        "pretend",
        "role play",
        "roleplay",
        "in character",
        "act as",
        "imagine you",
        "hypothetically",
        "ignore your",
        "ignore the rules",
        "ignore all",
        "come on",
        "just tell me",
        "please just",
        "i insist",
        "i don't mind spoilers",
        "i don't mind",
        "just a hint",
        "a small hint",
        "give me a hint",
        "best guess",
        "i've already seen",
        "i already know",
        "for a quiz",
        "between us",
    ),
    Cue.REQUEST: (
        "tell me",
        "what happens",
        "how does",
        "who is",
        "what is",
        "what was",
        "can you",
        "could you",
        "give me",
        "show me",
        "reveal",
        "suggest",
        "recommend",
        "remind me",
        "is there",
        "is it",
        "should i",
    ),
    Cue.AHEAD: (
        "what happens next",
        "what happens after",
        "what happens later",
        "what comes next",
        "how does it end",
        "how does the series end",
        "how does the show end",
        "the ending",
        "the finale",
        "later episodes",
    ),
    Cue.DOUBT: (
        "are you sure",
        "is that right",
        "is that true",
        "is that correct",
        "is that really",
        "really true",
        "how do you know",
        "source",
        "double check",
        "i thought",
        "that doesn't sound right",
        "doesn't sound right",
    ),
    Cue.REJECT: (
        "that's wrong",
        "that is wrong",
        "not true",
        "that's not right",
        "that isn't right",
        "you're wrong",
        "incorrect",
        "i don't believe",
        "that can't be right",
    ),
    Cue.ACCEPT: (
        "thanks",
        "thank you",
        "great",
        "perfect",
        "sounds good",
        "got it",
        "ok",
        "okay",
        "brilliant",
        "awesome",
        "i'll do that",
        "will do",
    ),
    Cue.HEDGE: (
        "might",
        "may",
        "perhaps",
        "possibly",
        "probably",
        "i think",
        "i believe",
        "not sure",
        "not certain",
        "it seems",
        "could be",
        "likely",
        "i don't have reliable information",
        "i don't know",
        "as far as i know",
    ),
    Cue.BOOSTER: (
        "definitely",
        "certainly",
        "absolutely",
        "i'm sure",
        "i am sure",
        "fairly sure",
        "pretty sure",
        "for sure",
        "sure thing",
        "without a doubt",
        "guaranteed",
        "of course",
        "always",
        "100 percent",
        "no doubt",
    ),
    Cue.FAMILIAR: (
        "my friend",
        "buddy",
        "pal",
        "dear",
        "darling",
        "sweetie",
        "sweetheart",
        "honey",
        "bestie",
        "mate",
        "love you",
    ),
    Cue.SERIOUS: (
        "allergy",
        "allergic",
        "allergies",
        "anaphylaxis",
        "coeliac",
        "celiac",
        "worried",
        "scared",
        "afraid",
        "emergency",
        "urgent",
        "hospital",
        "stranded",
        "dangerous",
    ),
    Cue.FLIPPANT: (
        "haha",
        "hehe",
        "lol",
        "lmao",
        "just kidding",
        "no big deal",
        "relax",
        "chill",
        "don't sweat it",
    ),
}


# Words too common to show what a message is about.
_STOPWORDS_TEXT = """
a about after again all also am an and any anything are as at be been before being but by
can could did do does don for from get go going got had has have he her here hi him his how
i if in into is isn it its just know let like ll m me more most much my need no not now of
ok okay on one or our out over please re really s say she should so some something t tell
than that the their them then there these they this those to too up us ve very want was we
were what when where which who why will with would you your
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def content_words(tokens: Sequence[str]) -> set[str]:
    """The tokens that carry content: ``tokens`` without :data:`STOPWORDS`."""
    return {token for token in tokens if token not in STOPWORDS}


class CueFinder:
    """All cue phrases in one index: one pass over a text finds every cue in it."""

    def __init__(self) -> None:
        self._index: PhraseIndex[tuple[Cue, str]] = PhraseIndex()
        for cue, phrases in _PHRASES.items():
            for phrase in phrases:
                self._index.add(phrase, (cue, phrase))

    def find(self, tokens: Sequence[str]) -> dict[Cue, list[str]]:
        """The cue phrases present in ``tokens``, by cue, in order of first occurrence."""
        found: dict[Cue, list[str]] = {}
        for cue, phrase in self._index.find(tokens):
            found.setdefault(cue, []).append(phrase)
        return found


CUES = CueFinder()
"""The shared finder (immutable once built)."""
