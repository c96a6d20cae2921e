"""The testing layer: scenario packs, model-testing scripts, simulated users, human sessions."""

from corix.testing.imported import ImportedDialogue, read_dialogues
from corix.testing.simulation import (
    STRATEGIES,
    STYLES,
    CoverageRow,
    PersonaCoverage,
    persona_coverage,
)

__all__ = [
    "STRATEGIES",
    "STYLES",
    "CoverageRow",
    "ImportedDialogue",
    "PersonaCoverage",
    "persona_coverage",
    "read_dialogues",
]
