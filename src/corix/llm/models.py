"""The request and response of one chat call, the same for every endpoint and transport."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from corix.domain import JsonObject, ToolCall

Role = Literal["system", "developer", "user", "assistant", "tool"]


class ChatMessage(BaseModel):
    """One message of a conversation sent to a model.

    An assistant message may carry the tool calls it made (its ``content`` then often
    empty); a ``tool`` message is the result of the call ``tool_call_id`` names.
    """

    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_openai_shape(cls, data: Any) -> Any:
        """Take a message as OpenAI's API writes it: content ``null`` or a list of text
        parts, tool calls with their ``function`` object."""
        if not isinstance(data, dict) or (
            isinstance(data.get("content"), str) and "tool_calls" not in data
        ):
            return data  # the common case, untouched
        data = dict(data)
        content = data.get("content")
        if content is None:
            data["content"] = ""
        elif isinstance(content, list):
            texts = (part.get("text") for part in content if isinstance(part, dict))
            data["content"] = "".join(text for text in texts if isinstance(text, str))
        calls = data.get("tool_calls")
        if calls is None:
            data.pop("tool_calls", None)
        elif isinstance(calls, list):
            data["tool_calls"] = [_flat_call(call) for call in calls]
        return data

    @property
    def is_plain(self) -> bool:
        """Only a role and a text: how nearly every message looks."""
        return not self.tool_calls and self.tool_call_id is None and self.name is None

    def to_openai(self) -> JsonObject:
        """The message as OpenAI's API takes it."""
        if self.is_plain:
            return {"role": self.role, "content": self.content}
        data: JsonObject = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["content"] = self.content or None
            data["tool_calls"] = [
                {
                    "id": call.id,
                    "type": call.type,
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            data["name"] = self.name
        return data


def _flat_call(call: Any) -> Any:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        return call
    function = call["function"]
    return {
        "id": call.get("id"),
        "type": call.get("type", "function"),
        "name": function.get("name"),
        "arguments": function.get("arguments", ""),
    }


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
    response_format: JsonObject | None = None
    tools: list[JsonObject] | None = None
    """Tools offered to the model, as OpenAI's ``tools`` (``{"type": "function",
    "function": {"name", "description", "parameters"}}``)."""
    extra: JsonObject = Field(default_factory=dict)


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
    tool_calls: tuple[ToolCall, ...] = ()
    """The tool calls the model made, in order (``text`` may then be empty)."""
    refusal: str | None = None
    """The model's refusal, when it reported one apart from its content (``text`` is then
    the refusal, unless it also gave content)."""
