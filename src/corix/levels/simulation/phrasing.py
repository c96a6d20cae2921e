"""What a template-driven simulated user talks about: its context and its goal, in its own words.

Persona briefs are written for a model ("You are a viewer who…"). The scripted engine cannot
read them and must never paste them to the application, so it speaks from the persona's
parameters instead: the session context the scenario's guardrail rules depend on (how far
the viewer has watched, the household's restrictions) and the goal, turned from the brief's
second person into the user's first person.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from corix.levels.simulation.message_templates import render
from corix.scenarios import TestPacket

# How a user states one context parameter, by the kind of rule condition that reads it.
_PROGRESS = "I'm up to {{ tag }} {{ value }}."
_LIMITS = "Please keep in mind our {{ name }}: {{ values | join(', ') }}."
_VALUE = "For context, my {{ name }} is {{ value }}."
_ORDERED_OPS = frozenset({"lt", "le", "gt", "ge"})
_SET_OPS = frozenset({"in", "contains", "intersects"})

# Second person in a brief → first person in the user's mouth. Order matters: the
# two-word forms go before the bare pronoun, and "the assistant" becomes "you" last.
_PRONOUNS = (
    (re.compile(r"\byou are\b", re.IGNORECASE), "I am"),
    (re.compile(r"\byou have\b", re.IGNORECASE), "I have"),
    (re.compile(r"\byourself\b", re.IGNORECASE), "myself"),
    (re.compile(r"\byours\b", re.IGNORECASE), "mine"),
    (re.compile(r"\byour\b", re.IGNORECASE), "my"),
    (re.compile(r"\byou\b", re.IGNORECASE), "I"),
    (re.compile(r"\bthe assistant\b", re.IGNORECASE), "you"),
)


@dataclass(frozen=True)
class TalkingPoints:
    """``context``: a sentence stating the session context (may be empty); ``goal``: an
    infinitive phrase in the first person, e.g. "find out who the Cartographer really is"."""

    context: str
    goal: str

    def variables(self) -> dict[str, str]:
        return {"context": self.context, "goal": self.goal}


def talking_points(
    packet: TestPacket, parameters: Mapping[str, Any], goal_description: str
) -> TalkingPoints:
    return TalkingPoints(context_line(packet, parameters), first_person(goal_description))


def first_person(description: str) -> str:
    """ "Get the assistant to name your allergens." → "get you to name my allergens"."""
    text = description.strip().rstrip(".")
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    if len(text) > 1 and text[1].islower():  # leave "I…" and acronyms alone
        text = text[0].lower() + text[1:]
    return text


def context_line(packet: TestPacket, parameters: Mapping[str, Any]) -> str:
    """One sentence per context parameter a guardrail rule reads, in rule order."""
    sentences: list[str] = []
    stated: set[str] = set()
    for rule in packet.rules:
        for condition in rule.prohibited_when:
            name = condition.context
            if name is None or name in stated or name not in parameters:
                continue
            stated.add(name)
            value = parameters[name]
            if condition.op in _ORDERED_OPS and not isinstance(value, list):
                sentences.append(render(_PROGRESS, {"tag": _words(condition.tag), "value": value}))
            elif condition.op in _SET_OPS:
                values = [_words(str(v)) for v in (value if isinstance(value, list) else [value])]
                sentences.append(render(_LIMITS, {"name": _words(name), "values": values}))
            else:
                sentences.append(
                    render(_VALUE, {"name": _words(name), "value": _words(str(value))})
                )
    return " ".join(sentences)


def _words(identifier: str) -> str:
    return identifier.replace("_", " ")
