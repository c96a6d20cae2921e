"""Briefings: the persona and goal a human tester plays, drawn from the scenario pack.

Human testers get the same persona templates and targets (red teaming) or tasks (field
testing) as simulated users, so human and simulated sessions of a scenario are comparable.
"""

from __future__ import annotations

import random
from functools import cache

from corix.domain import Level
from corix.scenarios import PersonaInstance, expand_personas, resolve_pack
from corix.storage.web.assignments import Briefing


@cache
def _instances(scenario: str, level: Level) -> tuple[PersonaInstance, ...]:
    return tuple(expand_personas(resolve_pack(scenario), level))


def draw_briefing(scenario: str, level: Level, rng: random.Random) -> Briefing | None:
    """One persona × goal for an assignment; ``None`` if the pack has none."""
    instances = _instances(scenario, level)
    if not instances:
        return None
    chosen = rng.choice(instances)
    return Briefing(
        key=chosen.key,
        persona=chosen.persona,
        template_version=chosen.template_version,
        text=chosen.text,
        parameters=chosen.parameters,
        goal=chosen.goal,
        goal_description=chosen.goal_description,
        success_criteria=tuple(chosen.success_criteria),
    )
