"""Sessions, turns, questionnaire answers and their provenance."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from corix.domain.json_values import JsonObject
from corix.domain.messages import Message, MessageRole, ToolCall, reply_text, user_text


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
    SOURCE_ERROR = "source_error"
    """Recorded elsewhere and ended there in an error (an Inspect AI sample's error, whose
    text is the detail): the session failed and is never measured, whatever it holds."""


class SessionBrief(BaseModel):
    """What a session set out to do, as the layers after testing read it.

    Written by whoever made the session (a model-testing script, a simulated user, the
    web's assignment); read by the annotator's view (required facts) and persona coverage
    (the goal, the message style).
    """

    model_config = ConfigDict(frozen=True)

    goal: str | None = None
    """The pack's red-team target or field task the user pursued (its id)."""
    required_facts: tuple[str, ...] | None = None
    """Fact ids a good answer contains, when the session lists them (model-testing scripts);
    ``None`` leaves them to the field task named by ``goal``."""
    probe: str | None = None
    """Model testing: which side of the guardrail the script probes."""
    message_style: str | None = None
    """Scripted field testing: the style the simulated tester writes in."""


class ImportedSource(BaseModel):
    """Where an imported session was recorded, and what its source kept beside the dialogue.

    Kept as given, never interpreted: a source's own scores are not annotations, and its
    metadata may name anything (scenario and level, read from it, are also typed fields
    of the session).
    """

    model_config = ConfigDict(frozen=True)

    format: str
    """``openai_jsonl``, ``csv`` or ``inspect``."""
    file: str
    line: int | None = None
    """The JSON Lines line, or the CSV line of the conversation's first message."""
    task: str | None = None
    """Inspect AI: the task's name (``eval.task``) and the log's ``eval_id``."""
    eval_id: str | None = None
    sample_id: str | None = None
    epoch: int | None = None
    target: Any = None
    """Inspect AI: the sample's target, as given."""
    metadata: JsonObject = Field(default_factory=dict)
    """All of the source's metadata: an Inspect sample's ``metadata``; a JSON Lines
    dialogue's keys other than ``id``, ``messages`` and the context keys."""
    scores: JsonObject = Field(default_factory=dict)
    """Inspect AI: the sample's scores by scorer (value, answer, explanation, metadata)."""
    usage: JsonObject = Field(default_factory=dict)
    """Inspect AI: the sample's token usage by model (``model_usage``)."""
    limit: JsonObject | None = None
    """Inspect AI: the limit that stopped the sample (type, limit, reason)."""
    error: JsonObject | None = None
    """Inspect AI: the sample's error (message, traceback); the session is then failed."""


_BRIEF_KEYS = ("required_facts", "probe", "message_style")
_GOAL_KEYS = ("goal", "task", "target")
"""Parameters that named the session's goal before it had a typed brief: the web's
assignment (``goal``), a simulated field tester (``task``) or red teamer (``target``)."""
_TYPED_KEYS = ("system_prompt", "conversation_id")


class Provenance(BaseModel):
    """What made a stored result. Unknown parts stay ``None`` rather than being guessed.

    ``parameters`` holds the template's own parameters only, shown as they are; what other
    layers read by name has a typed field (``brief``, ``system_prompt``,
    ``conversation_id``).
    """

    model_config = ConfigDict(frozen=True)

    application: str
    application_version: str | None = None
    scenario: str
    scenario_version: str | None = None
    template: str | None = None
    template_version: str | None = None
    parameters: JsonObject = Field(default_factory=dict)
    brief: SessionBrief = Field(default_factory=SessionBrief)
    system_prompt: str | None = None
    """The application's system prompt, when it declares one: kept for guideline-leakage
    checks, never shown to an annotator."""
    conversation_id: str | None = None
    """An imported session's conversation id in the file it came from."""
    imported: ImportedSource | None = None
    """An imported session: its source and what the source kept beside the dialogue."""
    engine: str | None = None
    model: str | None = None
    model_version: str | None = None
    seed: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _typed_facts_from_parameters(cls, data: Any) -> Any:
        """Provenance stored before it had a ``brief`` kept these facts among the parameters.

        Provenance with a ``brief`` is never touched, so a template's own parameter that
        happens to share an old name stays a parameter.
        """
        if not isinstance(data, dict) or "brief" in data:
            return data
        parameters = dict(data.get("parameters") or {})
        brief = {key: parameters.pop(key) for key in _BRIEF_KEYS if key in parameters}
        goals = [parameters.pop(key) for key in _GOAL_KEYS if key in parameters]
        brief["goal"] = next((goal for goal in goals if goal is not None), None)
        typed = {key: parameters.pop(key) for key in _TYPED_KEYS if key in parameters}
        return {**typed, **data, "parameters": parameters, "brief": brief}


class TurnRecord(BaseModel):
    """One adjacency pair: a user prompt and the application's response (or its error).

    A plain turn is its two texts. A turn that holds more — a tool-using application's
    tool calls and results, system or developer messages, content parts, several messages
    of one role — keeps every message in order in ``messages``; its ``user_text`` and
    ``response_text`` are then what the user and the assistant said in it (see
    :meth:`from_messages`), so readers of the two texts keep working. Read a turn's
    messages through :attr:`steps`, which gives a plain turn's two texts as messages too.
    """

    index: int
    user_text: str
    response_text: str | None = None
    error: str | None = None
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    created_at: datetime | None = None
    meta: JsonObject = Field(default_factory=dict)
    messages: tuple[Message, ...] | None = None
    """Every message of the turn in order; ``None`` for a plain turn (its two texts)."""

    @classmethod
    def from_messages(cls, index: int, messages: Sequence[Message], **fields: Any) -> TurnRecord:
        """The turn of ``messages``: its texts derived from them, and the messages kept
        unless they are exactly a user's text and an assistant's text (a plain turn)."""
        steps = tuple(messages)
        plain = (
            len(steps) == 2
            and [m.role for m in steps] == [MessageRole.USER, MessageRole.ASSISTANT]
            and all(m.is_plain for m in steps)
        )
        return cls(
            index=index,
            user_text=user_text(steps),
            response_text=fields.pop("response_text", reply_text(steps)),
            messages=None if plain else steps,
            **fields,
        )

    @property
    def steps(self) -> tuple[Message, ...]:
        """The turn's messages in order: stored ones, or a plain turn's two texts (no
        assistant message when the application did not answer)."""
        if self.messages is not None:
            return self.messages
        if self.response_text is None:
            return (Message.user(self.user_text),)
        return (Message.user(self.user_text), Message.assistant(self.response_text))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The assistant's tool calls in this turn, in order."""
        return [call for m in self.messages or () for call in m.tool_calls]

    @property
    def tool_results(self) -> list[Message]:
        """The tool results in this turn, in order."""
        return [m for m in self.messages or () if m.role is MessageRole.TOOL]

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


class ModelUsage(BaseModel):
    """The model calls one party to a session made (the simulated user's, a judge's
    pass's), and the tokens they took: only calls the model answered, none served from
    a response cache (those cost nothing)."""

    model_config = ConfigDict(frozen=True)

    calls: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)


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
