"""The one interface both engines implement: a simulated user that moves turn by turn.

A simulated session is described by a :class:`SimulationSpec` (the persona, the red
teamer's strategies or the field tester's style, the engine and the turn limit), which is
what a work item carries. An engine is asked for its next :data:`Move` after each turn:
either something to :class:`Say` or a reason to :class:`Stop`. Afterwards it answers the
scenario's questionnaire.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from corix.domain import EndReason, ModelUsage, TurnRecord
from corix.levels.recorder import TurnMeta
from corix.levels.simulation.progress import TurnOutcome
from corix.levels.simulation.questionnaire import QuestionnaireValue
from corix.scenarios import PersonaInstance, QuestionnaireItem

EngineName = Literal["scripted", "llm"]


class SimulationSpec(BaseModel):
    """Everything that defines one simulated session; the payload of its work item."""

    model_config = ConfigDict(frozen=True)

    persona: PersonaInstance
    strategies: list[str] = Field(
        default_factory=list,
        description="red teaming: the opening strategy, then the ones to escalate to in order",
    )
    style: str | None = Field(default=None, description="scripted field testing: the message style")
    engine: EngineName
    fallback_scripted: bool = Field(
        default=False, description="llm engine: the scripted engine may write a turn it fails"
    )
    max_turns: int = Field(ge=1)
    seed: int = Field(description="drives the session's own choices; stored as its provenance")


@dataclass(frozen=True)
class Say:
    """Send ``text`` to the application; ``meta`` is stored with the turn."""

    text: str
    meta: TurnMeta = field(default_factory=TurnMeta)


@dataclass(frozen=True)
class Stop:
    """End the dialogue without sending anything more."""

    reason: EndReason
    detail: str = ""


Move = Say | Stop


class SimulatedUser(Protocol):
    """A simulated tester, played by rules or by a model."""

    @property
    def respondent(self) -> str:
        """Who answers the questionnaire, e.g. ``simulated:scripted``."""

    @property
    def model(self) -> str | None:
        """The model playing the user, if any (provenance)."""

    @property
    def usage(self) -> ModelUsage:
        """The model calls made so far, stored with the session (none by rules)."""

    async def next_move(self, last_turn: TurnRecord | None, outcome: TurnOutcome | None) -> Move:
        """The opening move (``last_turn`` is ``None``) or the move after ``last_turn``."""

    async def answer_questionnaire(
        self, items: Sequence[QuestionnaireItem], end_reason: EndReason
    ) -> dict[str, QuestionnaireValue]:
        """Answers by item id; items the engine cannot answer are left out."""
