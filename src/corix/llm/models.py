"""The request and response of one chat call, the same for every endpoint and transport."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant"]


class ChatMessage(BaseModel):
    """One message of a conversation sent to a model."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str


class ChatRequest(BaseModel):
    """A chat completion request in OpenAI's vocabulary.

    ``model`` may be left empty to use the endpoint's default model. ``response_format``
    follows OpenAI's structured-output shape, e.g.
    ``{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}``.
    ``extra`` carries further provider parameters (``top_p``, ``stop``…); it cannot
    override the named fields.
    """

    model_config = ConfigDict(extra="forbid")

    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    response_format: dict[str, Any] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class ChatResponse(BaseModel):
    """A model's reply and what it took to get it.

    ``latency_ms`` is the duration of the attempt that succeeded (queueing, rate-limit
    waits and failed attempts excluded); ``attempts`` is 0 for a reply served from the
    cache.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    cached: bool
    attempts: int
    structured_output: str | None = None
    """How JSON output was asked for (``json_schema``, ``json_object`` or ``prompt``);
    ``None`` when the request asked for no schema."""
    finish_reason: str | None = None
    """Why the model stopped (``stop``, ``length`` when cut at ``max_tokens``…), if said."""
    cached_prompt_tokens: int | None = None
    """Of ``prompt_tokens``, those a server or local model took from a kept prefix instead
    of evaluating (OpenAI's ``usage.prompt_tokens_details.cached_tokens``), if reported."""
