"""Word utilities shared by retrieval and reading: stopwords, a plural stemmer, numbers."""

from __future__ import annotations

from collections.abc import Sequence

from corix.scenarios import tokenize


def word_set(words: str) -> frozenset[str]:
    """The space-separated ``words`` as a set: keeps long word lists readable."""
    return frozenset(words.split())


NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    )
}
STOPWORDS = frozenset(NUMBER_WORDS) | word_set(
    "a about again also am an and any anything are as at be been being best but by can could "
    "did do does doesn don fine for from get go going good got had has have he her hi him his "
    "how i if in instead into is isn it its just know let like ll m make me more most much "
    "my need no not now of ok okay on or our out over please put re really remind right s "
    "say she should so some something suggest t take tell than that the their them then there "
    "these they think this those to too up us use ve very want was we were what when where "
    "which who why will with would you your"
)


def stem(token: str) -> str:
    """A light plural stemmer: enough for "episodes"/"episode", "allergies"/"allergy"."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def stems(text: str) -> list[str]:
    return [stem(token) for token in tokenize(text)]


def content_terms(tokens: Sequence[str]) -> set[str]:
    """The stems of the words that carry content (no stopwords)."""
    return {stem(token) for token in tokens if token not in STOPWORDS}


def number(token: str) -> int | None:
    """The value of a numeral or a number word ("3", "three"), else None."""
    if token.isdigit():
        return int(token)
    return NUMBER_WORDS.get(token)
