"""corix's own testing levels, scenario packs, attack strategies and message styles,
registered through the ``corix.plugins`` entry point ``testing``."""

from __future__ import annotations

from corix.domain import Level
from corix.execution import LEVEL_PLANNERS, WORK_HANDLERS
from corix.registry import Plugin
from corix.scenarios import PACK_FOLDERS, builtin_pack_dir, list_builtin_packs
from corix.testing import model_testing
from corix.testing.simulation import levels as simulated
from corix.testing.simulation.strategies import BUILTIN_STRATEGIES, STRATEGIES
from corix.testing.simulation.styles import BUILTIN_STYLES, STYLES


def register(plugin: Plugin) -> None:
    plugin.add(LEVEL_PLANNERS, Level.MODEL_TESTING.value, model_testing.plan_model_tests)
    plugin.add(LEVEL_PLANNERS, Level.RED_TEAMING.value, simulated.plan_red_teaming)
    plugin.add(LEVEL_PLANNERS, Level.FIELD_TESTING.value, simulated.plan_field_testing)
    plugin.add(WORK_HANDLERS, model_testing.KIND, model_testing.run_model_test)
    plugin.add(WORK_HANDLERS, simulated.KIND, simulated.run_simulated_session)
    for name in list_builtin_packs():
        plugin.add(PACK_FOLDERS, name, builtin_pack_dir() / name)
    for strategy in BUILTIN_STRATEGIES:
        plugin.add(STRATEGIES, strategy.name, strategy)
    for style in BUILTIN_STYLES:
        plugin.add(STYLES, style.name, style)
