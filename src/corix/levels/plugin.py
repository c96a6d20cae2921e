"""corix's own testing levels (how ``execute_plan`` plans and runs each level's work items),
attack strategies and message styles (:data:`corix.registry.BUILTIN_PLUGINS`)."""

from __future__ import annotations

from corix.domain import Level
from corix.execution import LEVEL_PLANNERS, WORK_HANDLERS
from corix.levels import model_testing
from corix.levels.simulation import levels as simulated
from corix.levels.simulation.strategies import BUILTIN_STRATEGIES, STRATEGIES
from corix.levels.simulation.styles import BUILTIN_STYLES, STYLES
from corix.registry import Plugin


def register(plugin: Plugin) -> None:
    plugin.add(LEVEL_PLANNERS, Level.MODEL_TESTING.value, model_testing.plan_model_tests)
    plugin.add(LEVEL_PLANNERS, Level.RED_TEAMING.value, simulated.plan_red_teaming)
    plugin.add(LEVEL_PLANNERS, Level.FIELD_TESTING.value, simulated.plan_field_testing)
    plugin.add(WORK_HANDLERS, model_testing.KIND, model_testing.run_model_test)
    plugin.add(WORK_HANDLERS, simulated.KIND, simulated.run_simulated_session)
    for strategy in BUILTIN_STRATEGIES:
        plugin.add(STRATEGIES, strategy.name, strategy)
    for style in BUILTIN_STYLES:
        plugin.add(STYLES, style.name, style)
