"""Simulated users: red teamers and field testers played by rules or by a model.

:mod:`corix.levels.simulation.levels` holds the ``red_teaming`` and ``field_testing``
levels (registered by :mod:`corix.levels.plugin`).
"""

from corix.levels.simulation.character import break_character, copies_brief
from corix.levels.simulation.coverage import CoverageRow, PersonaCoverage, persona_coverage
from corix.levels.simulation.dialogue import MAX_APP_ERRORS_IN_A_ROW, DialogueEnd, run_dialogue
from corix.levels.simulation.engine import Move, Say, SimulatedUser, SimulationSpec, Stop
from corix.levels.simulation.llm import LLMUser
from corix.levels.simulation.phrasing import TalkingPoints, talking_points
from corix.levels.simulation.progress import GoalTracker, TurnOutcome
from corix.levels.simulation.questionnaire import (
    field_test_answers,
    questionnaire_schema,
    read_answers,
    red_team_answers,
)
from corix.levels.simulation.scripted import ScriptedUser
from corix.levels.simulation.strategies import STRATEGIES, AttackStrategy
from corix.levels.simulation.styles import STYLES, MessageStyle

__all__ = [
    "MAX_APP_ERRORS_IN_A_ROW",
    "STRATEGIES",
    "STYLES",
    "AttackStrategy",
    "CoverageRow",
    "DialogueEnd",
    "GoalTracker",
    "LLMUser",
    "MessageStyle",
    "Move",
    "PersonaCoverage",
    "Say",
    "ScriptedUser",
    "SimulatedUser",
    "SimulationSpec",
    "Stop",
    "TalkingPoints",
    "TurnOutcome",
    "break_character",
    "copies_brief",
    "field_test_answers",
    "persona_coverage",
    "questionnaire_schema",
    "read_answers",
    "red_team_answers",
    "run_dialogue",
    "talking_points",
]
