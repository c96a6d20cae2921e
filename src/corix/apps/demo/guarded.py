"""How the guarded assistant answers: only facts, only those its guardrail rules permit.

It says so when it does not know, asks for missing context before answering what that
context decides, and offers a permitted fact of the same kind instead of a prohibited one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from corix.apps.demo.knowledge import MAX_STATEMENTS, Knowledge, Match, covers, top
from corix.scenarios import GuardrailRule, Statement, holds_for_all, prohibiting_rules

_MIN_SUPPORT = 0.3  # a permitted statement offered instead must hold at least this share


def guarded_answer(
    knowledge: Knowledge,
    query: set[str],
    asked: Mapping[str, set[int]],
    context: Mapping[str, Any],
) -> str:
    """The answer to ``query``, withholding what the rules prohibit in ``context``."""
    matches = knowledge.rank(query, asked, with_decoys=False)
    if not covers(matches):
        return "I don't have reliable information about that, so I won't guess."
    asked_about = top(matches)
    permitted: list[Match] = []
    blocked: list[Statement] = []
    blocking: list[GuardrailRule] = []
    for match in matches:
        fact = match.entry.statement
        rules = prohibiting_rules(knowledge.packet, fact, context) or _unclear(
            knowledge, fact, context
        )
        if not rules:
            if match.asked or match.coverage >= _MIN_SUPPORT:
                permitted.append(match)
        elif match in asked_about:
            blocked.append(fact)
            blocking.extend(rule for rule in rules if rule not in blocking)
    clarify = next((rule.clarify for rule in blocking if _unknown(rule, context)), None)
    if clarify is not None and not permitted:
        return clarify
    offered = " ".join(m.entry.statement.text for m in top(permitted)[:MAX_STATEMENTS])
    reason = _lower(blocking[0].description).rstrip(".") if blocking else ""
    asked_blocked = blocked and blocked[0] is matches[0].entry.statement and _specific(matches)
    if blocked and (asked_blocked or not offered):
        answer = f"I'm sorry, but I can't help with that one: {reason}."
        if offered:
            return f"{answer} Here's what I can tell you instead. {offered}"
        alternative = _alternative(knowledge, blocked[0], context)
        if alternative is not None:
            answer += f" How about this instead? {alternative.text}"
        return answer
    answer = f"Here's what I can tell you. {offered}"
    return f"{answer} I've left out {reason}." if blocking else answer


def _specific(matches: Sequence[Match]) -> bool:
    """Whether the best match stands out: the user asked about that one statement."""
    return len(matches) == 1 or matches[0].score > matches[1].score


def _unknown(rule: GuardrailRule, context: Mapping[str, Any]) -> bool:
    return any(
        c.context is not None and context.get(c.context) is None for c in rule.prohibited_when
    )


def _unclear(
    knowledge: Knowledge, fact: Statement, context: Mapping[str, Any]
) -> list[GuardrailRule]:
    """Rules that ask for their context first and might prohibit ``fact`` once it is known."""
    return [
        rule
        for rule in knowledge.packet.rules
        if rule.clarify is not None
        and _unknown(rule, context)
        and holds_for_all(rule.prohibited_when, fact.tags, context, when_unknown=True)
    ]


def _alternative(
    knowledge: Knowledge, rejected: Statement, context: Mapping[str, Any]
) -> Statement | None:
    """A permitted fact of the same kind as ``rejected`` (e.g. another dinner), if any."""
    shape = set(_scalar_tags(rejected))
    if not shape:
        return None
    for fact in knowledge.packet.facts:
        if shape <= set(_scalar_tags(fact)) and not prohibiting_rules(
            knowledge.packet, fact, context
        ):
            return fact
    return None


def _scalar_tags(statement: Statement) -> list[tuple[str, Any]]:
    return [(tag, value) for tag, value in statement.tags.items() if isinstance(value, str)]


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]
