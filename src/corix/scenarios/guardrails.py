"""Evaluating a packet's declarative guardrail rules against a session context.

Rules are data, never code: each condition compares one fact tag with one context parameter
(or a literal) using a fixed set of operators, so a pack cannot run anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from corix.scenarios.models import Condition, Decoy, GuardrailRule, Statement, TestPacket

_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_SYMBOLS = {"eq": "=", "ne": "≠", "lt": "<", "le": "≤", "gt": ">", "ge": "≥"}

Comparable = float | str | bool


def _scalar(value: Any) -> Comparable | None:
    """Numbers (and numeric text, e.g. from a web form) as floats; text case-folded."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip().casefold()
        return float(text) if _NUMBER.match(text) else text
    return None


def _values(value: Any) -> frozenset[Comparable]:
    items = value if isinstance(value, list | tuple | set | frozenset) else [value]
    return frozenset(v for v in map(_scalar, items) if v is not None)


def _is_number(value: Comparable | None) -> bool:
    return isinstance(value, float)


def _compare(op: str, left: Any, right: Any) -> bool:
    if op in ("in", "contains", "intersects"):
        lefts, rights = _values(left), _values(right)
        if op == "in":
            return not isinstance(left, list) and bool(lefts) and lefts <= rights
        if op == "contains":
            return not isinstance(right, list) and bool(rights) and rights <= lefts
        return bool(lefts & rights)
    if isinstance(left, list) or isinstance(right, list):
        return False
    a, b = _scalar(left), _scalar(right)
    if a is None or b is None:
        return False
    if op == "eq":
        return a == b
    if op == "ne":
        return a != b
    if not (_is_number(a) and _is_number(b)):
        return False
    x, y = float(a), float(b)
    return {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]


def same_value(left: Any, right: Any) -> bool:
    """Whether two scalars are equal as a rule compares them (numbers numerically, numeric
    text as numbers, text case-insensitively)."""
    return _compare("eq", left, right)


def condition_holds(
    condition: Condition,
    tags: Mapping[str, Any],
    context: Mapping[str, Any],
    *,
    when_unknown: bool = False,
) -> bool:
    """Whether ``condition`` holds for a statement's ``tags`` in ``context``.

    A statement without the tag never meets the condition. When the context lacks the
    parameter the answer is ``when_unknown``: an annotator cannot call a release prohibited
    without it (``False``), while a cautious assistant may assume the worst (``True``).
    """
    if condition.tag not in tags:
        return False
    if condition.context is not None:
        if context.get(condition.context) is None:
            return when_unknown
        operand = context[condition.context]
    else:
        operand = condition.value
    return _compare(condition.op, tags[condition.tag], operand)


def holds_for_all(
    conditions: Iterable[Condition],
    tags: Mapping[str, Any],
    context: Mapping[str, Any],
    *,
    when_unknown: bool = False,
) -> bool:
    return all(condition_holds(c, tags, context, when_unknown=when_unknown) for c in conditions)


def prohibiting_rules(
    packet: TestPacket,
    statement: Statement,
    context: Mapping[str, Any],
    *,
    when_unknown: bool = False,
) -> list[GuardrailRule]:
    """The packet's rules that prohibit releasing ``statement`` in ``context``."""
    return [
        rule
        for rule in packet.rules
        if holds_for_all(rule.prohibited_when, statement.tags, context, when_unknown=when_unknown)
    ]


def is_prohibited(packet: TestPacket, statement: Statement, context: Mapping[str, Any]) -> bool:
    """Decoys always are; facts are when a rule says so in this context."""
    return isinstance(statement, Decoy) or bool(prohibiting_rules(packet, statement, context))


def explain(condition: Condition, tags: Mapping[str, Any], context: Mapping[str, Any]) -> str:
    """A condition with its values filled in, e.g. ``episode 6 > episode_seen 3``."""
    symbol = _SYMBOLS.get(condition.op, condition.op)
    if condition.context is not None:
        operand = f"{condition.context} {_show(context.get(condition.context))}"
    else:
        operand = _show(condition.value)
    return f"{condition.tag} {_show(tags.get(condition.tag))} {symbol} {operand}"


def _show(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def select_statements(
    packet: TestPacket,
    ids: Sequence[str],
    where: Sequence[Condition],
    context: Mapping[str, Any],
) -> list[str]:
    """Ids of the named statements plus every fact meeting all of ``where``, in packet order.

    Raises ``KeyError`` for an id the packet does not hold.
    """
    chosen = {packet.statement(statement_id).id for statement_id in ids}
    if where:
        chosen.update(fact.id for fact in packet.facts if holds_for_all(where, fact.tags, context))
    return [statement.id for statement in packet.statements if statement.id in chosen]
