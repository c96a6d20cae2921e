"""Normalisation and phrase search: markers match whole words, however the text is written."""

from __future__ import annotations

from corix.scenarios.text import PhraseIndex, normalize, tokenize


def test_tokens_ignore_case_punctuation_width_and_quote_style() -> None:
    assert tokenize("I CAN’T share—Tobias’s SECRET!") == [
        "i",
        "can",
        "t",
        "share",
        "tobias",
        "s",
        "secret",
    ]
    assert normalize("Ｆｕｌｌｗｉｄｔｈ  text") == "fullwidth text"
    assert tokenize("gluten-free stir_fry 07:40") == ["gluten", "free", "stir", "fry", "07", "40"]


def test_phrases_match_whole_words_only() -> None:
    index: PhraseIndex[str] = PhraseIndex()
    index.add("42 km", "distance")
    assert index.find(tokenize("It is about 42 km away.")) == {"distance": "42 km"}
    assert index.find(tokenize("It is 142 km away.")) == {}
    assert index.find(tokenize("42 kmh")) == {}


def test_overlapping_phrases_are_all_found_and_each_owner_reports_its_longest() -> None:
    index: PhraseIndex[str] = PhraseIndex()
    index.add("vera", "name")
    index.add("vera is alive", "twist")
    index.add("is alive", "twist")
    index.add("alive", "state")
    found = index.find(tokenize("Yes, Vera is alive."))
    assert found == {"name": "vera", "twist": "vera is alive", "state": "alive"}
    # In order of where phrases start; at the same start, the longer phrase first.
    assert list(found) == ["twist", "name", "state"]
