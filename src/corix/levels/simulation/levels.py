"""The red-teaming and field-testing levels: simulated users drawn from the packs' personas.

Planning draws ``sessions`` personas per scenario (every persona once when ``sessions`` is
not set) with a generator seeded by the plan's seed, the scenario and the level, and gives
every application the same draws, so that applications are compared on the same simulated
users. Red teamers are dealt attack strategies, and scripted field testers message styles,
in a seeded rotation that keeps both balanced (a model playing a field tester writes as its
brief says). Work keys depend only on the plan, so a resumed
run plans the same items.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator, Sequence
from typing import TypeVar

from corix.domain import Level, LevelSettings, Plan, Provenance, SessionBrief, SessionSource
from corix.errors import CorixError
from corix.execution import RunContext, WorkItem
from corix.levels.recorder import SessionRecorder
from corix.levels.simulation.dialogue import run_dialogue
from corix.levels.simulation.engine import SimulatedUser, SimulationSpec
from corix.levels.simulation.llm import LLMUser
from corix.levels.simulation.phrasing import talking_points
from corix.levels.simulation.progress import GoalTracker
from corix.levels.simulation.scripted import ScriptedUser
from corix.levels.simulation.strategies import STRATEGIES
from corix.levels.simulation.styles import STYLES
from corix.scenarios import (
    PersonaInstance,
    QuestionnaireItem,
    ScenarioPack,
    Toolbox,
    expand_personas,
)

KIND = "simulated_session"

logger = logging.getLogger(__name__)
T = TypeVar("T")


def plan_red_teaming(
    plan: Plan, settings: LevelSettings, packs: dict[str, ScenarioPack], run_id: str
) -> Iterator[WorkItem]:
    return _plan_level(Level.RED_TEAMING, plan, settings, packs, run_id)


def plan_field_testing(
    plan: Plan, settings: LevelSettings, packs: dict[str, ScenarioPack], run_id: str
) -> Iterator[WorkItem]:
    return _plan_level(Level.FIELD_TESTING, plan, settings, packs, run_id)


def strategy_names(chosen: Sequence[str] | None) -> list[str]:
    """The plan's strategies (all registered ones by default); unknown names raise."""
    return [STRATEGIES.get(name).name for name in chosen] if chosen else STRATEGIES.names()


def draw_personas(
    personas: Sequence[PersonaInstance], sessions: int | None, rng: random.Random
) -> list[PersonaInstance]:
    """Every persona once (``sessions`` unset), or ``sessions`` draws: whole shuffled rounds
    of the personas, so that each is drawn as evenly as the count allows."""
    if sessions is None:
        return list(personas)
    drawn: list[PersonaInstance] = []
    while len(drawn) < sessions:
        drawn.extend(rng.sample(personas, len(personas)))
    return drawn[:sessions]


def _plan_level(
    level: Level,
    plan: Plan,
    settings: LevelSettings,
    packs: dict[str, ScenarioPack],
    run_id: str,
) -> Iterator[WorkItem]:
    strategies = strategy_names(settings.strategies) if level is Level.RED_TEAMING else []
    scripted_field = level is Level.FIELD_TESTING and settings.engine == "scripted"
    styles = STYLES.names() if scripted_field else []
    for scenario, pack in packs.items():
        personas = expand_personas(pack, level)
        if not personas:
            continue
        rng = random.Random(f"{plan.seed}/{scenario}/{level.value}")
        drawn = draw_personas(personas, settings.sessions, rng)
        strategy_order = rng.sample(strategies, len(strategies))
        style_order = rng.sample(styles, len(styles))
        for index, persona in enumerate(drawn):
            spec = SimulationSpec(
                persona=persona,
                strategies=_rotated(strategy_order, index),
                style=style_order[index % len(style_order)] if style_order else None,
                engine=settings.engine,
                fallback_scripted=settings.engine == "llm" and settings.fallback == "scripted",
                max_turns=settings.max_turns,
                seed=rng.getrandbits(32),
            )
            payload = spec.model_dump(mode="json")
            for app in plan.applications_for(pack.name):
                yield WorkItem(
                    run_id=run_id,
                    key=f"{app.name}/{scenario}/{level.value}/{index}/{persona.key}",
                    kind=KIND,
                    application=app.name,
                    scenario=scenario,
                    level=level,
                    seed=plan.seed,
                    payload=payload,
                )


def _rotated(items: Sequence[T], start: int) -> list[T]:
    if not items:
        return []
    start %= len(items)
    return [*items[start:], *items[:start]]


async def run_simulated_session(item: WorkItem, ctx: RunContext) -> None:
    spec = SimulationSpec.model_validate(item.payload)
    persona = spec.persona
    app = ctx.applications[item.application]
    pack = ctx.packs[item.scenario]
    tracker = GoalTracker(pack.packet, item.level, persona.parameters, persona.goal_facts)
    user = _simulated_user(spec, pack, tracker, item, ctx)
    provenance = Provenance(
        application=app.name,
        application_version=app.version,
        scenario=pack.name,
        scenario_version=pack.version,
        template=persona.persona,
        template_version=persona.template_version,
        parameters=dict(persona.parameters),
        brief=SessionBrief(goal=persona.goal, message_style=spec.style),
        system_prompt=app.system_prompt,
        engine=spec.engine,
        model=user.model,
        seed=spec.seed,
    )
    recorder = SessionRecorder(
        ctx,
        item,
        source=SessionSource.SIMULATED,
        provenance=provenance,
        persona=persona.text,
        strategy=spec.strategies[0] if spec.strategies else None,
    )
    end = await run_dialogue(
        user, app.app, recorder, tracker, max_turns=spec.max_turns, toolbox=Toolbox.of(pack)
    )
    logger.debug("%s ended: %s %s", item.key, end.reason.value, end.detail)
    if any(not turn.failed for turn in recorder.turns):  # nothing to judge otherwise
        answers = await user.answer_questionnaire(_questionnaire(pack, item.level), end.reason)
        answered_by = "rules" if spec.engine == "scripted" else "in_character"
        recorder.record_answers(answers, respondent=user.respondent, answered_by=answered_by)
    recorder.finish(
        end.reason,
        detail=end.detail,
        first_success_turn=tracker.first_success_turn,
        simulator=user.usage,
    )


def _questionnaire(pack: ScenarioPack, level: Level) -> list[QuestionnaireItem]:
    if level is Level.RED_TEAMING:
        return list(pack.questionnaires.red_teaming)
    return list(pack.questionnaires.field_testing)


def _simulated_user(
    spec: SimulationSpec,
    pack: ScenarioPack,
    tracker: GoalTracker,
    item: WorkItem,
    ctx: RunContext,
) -> SimulatedUser:
    persona = spec.persona
    points = talking_points(pack.packet, persona.parameters, persona.goal_description)
    if spec.engine == "scripted":
        return ScriptedUser(spec, points, tracker, random.Random(spec.seed))
    client = ctx.simulators.get(item.level.value)
    if client is None:
        raise CorixError(f"no simulator endpoint is open for level '{item.level.value}'")
    settings = ctx.plan.levels.get(item.level)
    simulator = settings.simulator if settings is not None else None
    fallback = (
        ScriptedUser(spec, points, tracker, random.Random(spec.seed))
        if spec.fallback_scripted
        else None
    )
    return LLMUser(
        client,
        spec,
        points,
        seed=spec.seed,
        temperature=simulator.temperature if simulator is not None else None,
        fallback=fallback,
    )
