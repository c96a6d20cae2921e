"""ARIA's testing levels: model-testing scripts, simulated users, imported dialogues.

Named for the levels (model testing, red teaming, field testing), not for test helpers:
they turn a work item into a stored session."""

from corix.levels.importing import import_dialogues
from corix.levels.simulation import (
    STRATEGIES,
    STYLES,
    AttackStrategy,
    CoverageRow,
    MessageStyle,
    PersonaCoverage,
    persona_coverage,
)

__all__ = [
    "STRATEGIES",
    "STYLES",
    "AttackStrategy",
    "CoverageRow",
    "MessageStyle",
    "PersonaCoverage",
    "import_dialogues",
    "persona_coverage",
]
