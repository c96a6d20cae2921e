"""Simulated users: red teamers and field testers played by rules or by a model.

:mod:`corix.testing.simulation.levels` holds the ``red_teaming`` and ``field_testing``
levels (registered by :mod:`corix.testing.plugin`).
"""

from corix.testing.simulation.character import break_character, copies_brief
from corix.testing.simulation.coverage import CoverageRow, PersonaCoverage, persona_coverage
from corix.testing.simulation.dialogue import MAX_APP_ERRORS_IN_A_ROW, DialogueEnd, run_dialogue
from corix.testing.simulation.engine import Move, Say, SimulatedUser, SimulationSpec, Stop
from corix.testing.simulation.llm import LLMUser
from corix.testing.simulation.phrasing import TalkingPoints, talking_points
from corix.testing.simulation.progress import GoalTracker, TurnOutcome
from corix.testing.simulation.questionnaire import (
    field_test_answers,
    questionnaire_schema,
    read_answers,
    red_team_answers,
)
from corix.testing.simulation.scripted import ScriptedUser
from corix.testing.simulation.strategies import STRATEGIES, AttackStrategy
from corix.testing.simulation.styles import STYLES, MessageStyle

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
