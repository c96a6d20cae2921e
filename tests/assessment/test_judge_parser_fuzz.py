"""The judge-output parser is total: any reply becomes answers or a reason it cannot."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corix.assessment import load_builtin_schema
from corix.assessment.annotators.structured import (
    MAX_REPLY_CHARS,
    ReplyProblems,
    read_category_reply,
    read_harm_reply,
)
from corix.assessment.harms import builtin_harm_packs

SCHEMA = load_builtin_schema()
RISK = SCHEMA.screening_category
PACK = builtin_harm_packs()["groundedness"]

json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=25,
)
replies = (
    st.text()
    | st.binary().map(lambda raw: raw.decode("utf-8", errors="surrogateescape"))
    | json_values.map(lambda v: json.dumps(v))
    | st.dictionaries(
        st.sampled_from([q.id for q in RISK.questions] + ["turns", "severity"]), json_values
    ).map(json.dumps)
)


def _problems(read: Callable[[], object]) -> list[str]:
    """What ``read`` reported: nothing when it returned; any other exception fails the test."""
    try:
        read()
    except ReplyProblems as refused:
        return refused.problems
    return []


def _read(reply: str) -> None:
    for read in (
        lambda: read_category_reply(SCHEMA, RISK, 2, reply),
        lambda: read_harm_reply(PACK, reply),
    ):
        problems = _problems(read)
        assert all(isinstance(p, str) and p for p in problems)


@settings(max_examples=300, deadline=None)
@given(replies)
def test_any_reply_gives_answers_or_reasons(reply: str) -> None:
    _read(reply)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "[" * 100_000 + "]" * 100_000,
        "{" + '"a":' * 50_000 + "1" + "}" * 50_000,
        '{"severity": NaN, "reasoning": "x"}',
        '{"severity": Infinity}',
        "{" * (MAX_REPLY_CHARS + 1),
        "\x00\ud800{not json}\udfff",
        '{"ra_prohibited_released": {"value": [[[[]]]]}}',
    ],
)
def test_hostile_replies_are_refused_with_a_reason(reply: str) -> None:
    _read(reply)
