"""Persona templates expanded into simulated-user briefs.

A red-teaming persona is crossed with every red-team target, a field-testing persona with
every field task. The rendered brief is what a simulated user is told; ``parameters`` is the
session context the packet checks use.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from corix.domain import JsonObject, Level
from corix.scenarios.guardrails import is_prohibited
from corix.scenarios.models import FieldTask, PersonaTemplate, RedTeamTarget, ScenarioPack
from corix.scenarios.scripts import resolve_selector
from corix.scenarios.templating import render

# Variables a persona template may use besides its own parameters, per level.
PERSONA_VARIABLES: dict[Level, frozenset[str]] = {
    Level.RED_TEAMING: frozenset({"target"}),
    Level.FIELD_TESTING: frozenset({"task"}),
}


class PersonaInstance(BaseModel):
    """One simulated user: a rendered persona pursuing one target or task."""

    model_config = ConfigDict(frozen=True)

    key: str
    level: Level
    persona: str
    template_version: str
    text: str
    parameters: JsonObject
    goal: str
    goal_description: str
    goal_facts: list[str]
    success_criteria: list[str]


def expand_personas(pack: ScenarioPack, level: Level) -> list[PersonaInstance]:
    """Every persona of ``level`` × parameter set × target (or task), in a stable order.

    ``goal_facts`` are, for red teaming, the target's facts that are prohibited in that
    persona's context (a pairing with none is left out: succeeding would break no rule), and
    for field testing the facts the task needs.
    """
    instances = []
    for persona in pack.personas.templates:
        if persona.level is not level:
            continue
        for index, parameters in enumerate(persona.parameters.expand()):
            if level is Level.RED_TEAMING:
                for target in pack.personas.targets:
                    instance = _red_team(pack, persona, index, parameters, target)
                    if instance is not None:
                        instances.append(instance)
            else:
                instances.extend(
                    _field_test(pack, persona, index, parameters, task)
                    for task in pack.personas.tasks
                )
    return instances


def _red_team(
    pack: ScenarioPack,
    persona: PersonaTemplate,
    index: int,
    parameters: JsonObject,
    target: RedTeamTarget,
) -> PersonaInstance | None:
    selected = resolve_selector(pack.packet, target.facts, parameters)
    prohibited = [
        fact_id
        for fact_id in selected
        if is_prohibited(pack.packet, pack.packet.statement(fact_id), parameters)
    ]
    if not prohibited:
        return None
    goal = {"id": target.id, "description": target.description}
    return PersonaInstance(
        key=f"{pack.name}/{persona.id}/{index}/{target.id}",
        level=Level.RED_TEAMING,
        persona=persona.id,
        template_version=persona.version,
        text=render(persona.text, {**parameters, "target": goal}),
        parameters=parameters,
        goal=target.id,
        goal_description=target.description,
        goal_facts=prohibited,
        success_criteria=[],
    )


def _field_test(
    pack: ScenarioPack,
    persona: PersonaTemplate,
    index: int,
    parameters: JsonObject,
    task: FieldTask,
) -> PersonaInstance:
    goal = {
        "id": task.id,
        "description": task.description,
        "success_criteria": task.success_criteria,
    }
    return PersonaInstance(
        key=f"{pack.name}/{persona.id}/{index}/{task.id}",
        level=Level.FIELD_TESTING,
        persona=persona.id,
        template_version=persona.version,
        text=render(persona.text, {**parameters, "task": goal}),
        parameters=parameters,
        goal=task.id,
        goal_description=task.description,
        goal_facts=resolve_selector(pack.packet, task.required_facts, parameters),
        success_criteria=list(task.success_criteria),
    )
