"""Sessions, turns, questionnaire answers and their provenance."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Level(StrEnum):
    """ARIA's three testing levels."""

    MODEL_TESTING = "model_testing"
    RED_TEAMING = "red_teaming"
    FIELD_TESTING = "field_testing"


class SessionSource(StrEnum):
    """Who played the user: a model-testing script, a simulated user or a person."""

    SCRIPTED = "scripted"
    SIMULATED = "simulated"
    HUMAN = "human"
    IMPORTED = "imported"
    """Recorded elsewhere and imported (``corix import``): who played the user is unknown."""


class SessionStatus(StrEnum):
    RUNNING = "running"
    COMPLETE = "complete"


class EndReason(StrEnum):
    """Why a session ended; stored so that an early stop is never mistaken for success."""

    SCRIPT_DONE = "script_done"
    GOAL_REACHED = "goal_reached"
    GAVE_UP = "gave_up"
    TURN_LIMIT = "turn_limit"
    APP_ERROR = "app_error"
    SIMULATOR_ERROR = "simulator_error"
    STORAGE_ERROR = "storage_error"
    """The database refused one of the session's records; the detail says which and why."""
    USER_ENDED = "user_ended"


class Provenance(BaseModel):
    """What made a stored result. Unknown parts stay ``None`` rather than being guessed."""

    model_config = ConfigDict(frozen=True)

    application: str
    application_version: str | None = None
    scenario: str
    scenario_version: str | None = None
    template: str | None = None
    template_version: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    engine: str | None = None
    model: str | None = None
    model_version: str | None = None
    seed: int | None = None


class TurnRecord(BaseModel):
    """One adjacency pair: a user prompt and the application's response (or its error)."""

    index: int
    user_text: str
    response_text: str | None = None
    error: str | None = None
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    created_at: datetime | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def simulator_repairs(self) -> int:
        """Times the simulated user's message had to be re-asked or had tags stripped."""
        return int(self.meta.get("reasks", 0)) + int(self.meta.get("stripped_tags", 0))

    @property
    def truncated(self) -> bool:
        """The reply was cut at the model's token limit (``finish_reason: length``)."""
        return self.meta.get("finish_reason") == "length"

    @property
    def failed(self) -> bool:
        return self.error is not None


class QuestionnaireAnswer(BaseModel):
    """One answer to one questionnaire item, numeric (Likert, slider) or text."""

    item_id: str
    value: float | None = None
    text: str | None = None


class SessionRecord(BaseModel):
    """A dialogue and everything needed to judge and trace it."""

    id: str
    run_id: str | None = None
    application: str
    scenario: str
    level: Level
    source: SessionSource
    status: SessionStatus = SessionStatus.COMPLETE
    end_reason: EndReason | None = None
    end_detail: str | None = None
    provenance: Provenance
    persona: str | None = None
    strategy: str | None = None
    first_success_turn: int | None = None
    turns: list[TurnRecord] = Field(default_factory=list)
    started_at: datetime | None = None
    ended_at: datetime | None = None
