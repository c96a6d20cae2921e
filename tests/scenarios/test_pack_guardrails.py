"""Declarative guardrail conditions against a session context."""

from __future__ import annotations

from typing import Any

import pytest

from corix.scenarios import resolve_pack
from corix.scenarios.guardrails import condition_holds, explain, select_statements
from corix.scenarios.models import Condition


def holds(op: str, tag: Any, operand: Any, **kw: Any) -> bool:
    condition = Condition(tag="t", op=op, context="c")  # type: ignore[arg-type]
    return condition_holds(condition, {"t": tag}, {"c": operand}, **kw)


@pytest.mark.parametrize(
    ("op", "tag", "operand", "expected"),
    [
        ("gt", 6, 3, True),
        ("gt", 3, 3, False),
        ("ge", 3, 3, True),
        ("lt", 2, "3", True),  # numeric text, e.g. from a web form, compares as a number
        ("le", 4, 3.5, False),
        ("eq", "Peanut", "peanut", True),  # text compares case-insensitively
        ("ne", "peanut", "soy", True),
        ("eq", 3, "three", False),
        ("gt", "six", 3, False),  # not numbers: an ordering never holds
        ("in", "soy", ["peanut", "soy"], True),
        ("in", ["soy"], ["soy"], False),  # `in` wants a single tag value
        ("contains", ["ines", "vera"], "vera", True),
        ("contains", ["ines"], "vera", False),
        ("intersects", ["peanut", "soy"], ["gluten", "SOY"], True),
        ("intersects", ["peanut"], ["gluten"], False),
        ("intersects", [], ["gluten"], False),
        ("eq", ["a"], "a", False),  # lists never equal scalars
    ],
)
def test_operators(op: str, tag: Any, operand: Any, expected: bool) -> None:
    assert holds(op, tag, operand) is expected


def test_a_missing_tag_never_holds_and_a_missing_context_holds_only_when_asked() -> None:
    condition = Condition(tag="episode", op="gt", context="episode_seen")
    assert not condition_holds(condition, {}, {"episode_seen": 1}, when_unknown=True)
    assert not condition_holds(condition, {"episode": 5}, {})
    assert condition_holds(condition, {"episode": 5}, {}, when_unknown=True)
    assert not condition_holds(condition, {"episode": 5}, {"episode_seen": None})


def test_literal_values_need_no_context() -> None:
    condition = Condition(tag="episode", op="eq", value=8)
    assert condition_holds(condition, {"episode": 8}, {})


def test_explain_fills_in_the_values() -> None:
    condition = Condition(tag="episode", op="gt", context="episode_seen")
    assert explain(condition, {"episode": 6}, {"episode_seen": 3}) == "episode 6 > episode_seen 3"
    listed = Condition(tag="allergens", op="intersects", context="restrictions")
    assert (
        explain(listed, {"allergens": ["peanut", "soy"]}, {"restrictions": ["peanut"]})
        == "allergens [peanut, soy] intersects restrictions [peanut]"
    )


def test_select_statements_unions_ids_and_conditions_in_packet_order() -> None:
    packet = resolve_pack("tv_spoilers").packet
    where = [Condition(tag="episode", op="eq", context="episode")]
    chosen = select_statements(packet, ["decoy_pim_drowns", "ep1_arrival"], where, {"episode": 2})
    assert chosen == [
        "ep1_arrival",
        "ep2_tobias_heard_call",
        "ep2_merrow_adrift",
        "ep2_brass_key",
        "decoy_pim_drowns",
    ]
    with pytest.raises(KeyError):
        select_statements(packet, ["nope"], [], {})
