"""The messages of a turn, as OpenAI's chat format and Inspect AI represent them.

A plain turn is a user's text and the application's reply, and is stored as those two
texts. A turn of a tool-using application (an agent) is more: the assistant's tool calls
(name, arguments as the raw JSON text the model wrote, id), the tools' results, then its
answer; an imported turn may also carry system or developer messages, content as a list
of parts, or several messages of one role. Such a turn keeps every message, in order, as
a :class:`Message`: nothing is flattened or dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from corix.domain.json_values import JsonObject

__all__ = [
    "ContentPart",
    "Message",
    "MessageRole",
    "ToolCall",
    "reply_text",
    "split_turns",
    "user_text",
]


class MessageRole(StrEnum):
    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


INSTRUCTION_ROLES = frozenset({MessageRole.SYSTEM, MessageRole.DEVELOPER})
"""Messages that configure the application: never shown to annotators (blinding)."""


class ContentPart(BaseModel):
    """One part of a message's content (an OpenAI content part, an Inspect ``Content``).

    Text parts carry ``text``; every other field a part has (an image's URL, audio, a
    reasoning block) is kept as given.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    type: str
    text: str | None = None

    @property
    def as_text(self) -> str:
        """The part's text, or a placeholder naming its type (``[image_url]``)."""
        return self.text if self.text is not None else f"[{self.type}]"


class ToolCall(BaseModel):
    """A tool call the assistant made."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = ""
    """The arguments as the raw JSON text the model wrote: stored as given, even when it is
    not valid JSON, and never parsed to be recorded or shown."""
    type: str = "function"


class Message(BaseModel):
    """One message of a dialogue, in OpenAI's chat roles."""

    model_config = ConfigDict(frozen=True)

    role: MessageRole
    content: str | tuple[ContentPart, ...] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    """An assistant's tool calls, in the order it made them."""
    tool_call_id: str | None = None
    """A tool result: the id of the call it answers."""
    name: str | None = None
    """A tool result: the tool's name; another role: the participant's name, if given."""
    error: str | None = None
    """A tool result: the tool's error, when it failed (Inspect's ``ToolCallError``)."""
    refusal: str | None = None
    """An assistant's refusal text, when the model reported one apart from its content."""
    metadata: JsonObject = Field(default_factory=dict)
    """Whatever else the source gave the message (an imported file's extra fields)."""

    @model_validator(mode="after")
    def _fields_of_the_role(self) -> Message:
        if self.tool_calls and self.role is not MessageRole.ASSISTANT:
            raise ValueError(f"a {self.role} message cannot make tool calls")
        if self.tool_call_id is not None and self.role is not MessageRole.TOOL:
            raise ValueError(f"a {self.role} message cannot answer a tool call")
        return self

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role=MessageRole.USER, content=text)

    @classmethod
    def assistant(cls, text: str | None, tool_calls: Sequence[ToolCall] = ()) -> Message:
        return cls(role=MessageRole.ASSISTANT, content=text, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, call: ToolCall, result: str, *, error: str | None = None) -> Message:
        """The result of ``call`` (its text, or the tool's ``error``)."""
        return cls(
            role=MessageRole.TOOL, content=result, tool_call_id=call.id, name=call.name, error=error
        )

    @property
    def text(self) -> str:
        """The content as text: a list of parts is joined, other parts shown by their type."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(part.as_text for part in self.content)

    @property
    def is_plain(self) -> bool:
        """Text content and nothing else: what a plain turn's two texts can hold."""
        return (
            isinstance(self.content, str)
            and not self.tool_calls
            and self.tool_call_id is None
            and self.name is None
            and self.error is None
            and self.refusal is None
            and not self.metadata
        )

    def to_openai(self) -> JsonObject:
        """The message in OpenAI's chat format (``metadata`` is corix's, not sent)."""
        data: JsonObject = {"role": self.role.value}
        if isinstance(self.content, tuple):
            data["content"] = [part.model_dump(exclude_none=True) for part in self.content]
        else:
            data["content"] = self.content
        if self.tool_calls:
            data["tool_calls"] = [
                {
                    "id": call.id,
                    "type": call.type,
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        for key in ("tool_call_id", "name", "refusal"):
            if (value := getattr(self, key)) is not None:
                data[key] = value
        return data

    @classmethod
    def from_openai(cls, data: Mapping[str, Any]) -> Message:
        """A message in OpenAI's chat format; fields corix does not model go to ``metadata``.

        Raises ``pydantic.ValidationError`` (naming the field) on a malformed message.
        """
        known = {"role", "content", "tool_calls", "tool_call_id", "name", "refusal"}
        fields: JsonObject = {key: data[key] for key in known & data.keys()}
        calls = fields.get("tool_calls")
        if isinstance(calls, list):
            fields["tool_calls"] = [_openai_call(call) for call in calls]
        elif calls is None:
            fields.pop("tool_calls", None)
        extra = {key: value for key, value in data.items() if key not in known}
        return cls.model_validate({**fields, "metadata": extra})


def _openai_call(call: Any) -> Any:
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        return call  # left to validation, which names what is wrong
    function = call["function"]
    return {
        "id": call.get("id"),
        "type": call.get("type", "function"),
        "name": function.get("name"),
        "arguments": function.get("arguments", ""),
    }


def user_text(messages: Iterable[Message]) -> str:
    """What the user said in a turn: its user messages' texts, joined."""
    return "\n\n".join(m.text for m in messages if m.role is MessageRole.USER)


def reply_text(messages: Sequence[Message]) -> str | None:
    """What the application said in a turn: the texts of its assistant messages after the
    user's first message, joined (``None``: it said nothing, e.g. only called tools)."""
    start = next((i for i, m in enumerate(messages) if m.role is MessageRole.USER), 0)
    texts = [m.text for m in messages[start:] if m.role is MessageRole.ASSISTANT and m.text.strip()]
    return "\n\n".join(texts) if texts else None


_INPUT_ROLES = frozenset({MessageRole.SYSTEM, MessageRole.DEVELOPER, MessageRole.USER})


def split_turns(messages: Sequence[Message]) -> list[tuple[Message, ...]]:
    """A dialogue's messages as turns (adjacency pairs).

    A turn starts where input (a system, developer or user message) follows the
    application's output (an assistant message or a tool result); everything before the
    first user message (a system prompt, an assistant's greeting) belongs to the first
    turn, and consecutive messages of one role stay together.
    """
    turns: list[tuple[Message, ...]] = []
    current: list[Message] = []
    answered = False
    for message in messages:
        if message.role in _INPUT_ROLES and answered and _has_user(current):
            turns.append(tuple(current))
            current, answered = [], False
        current.append(message)
        if message.role not in _INPUT_ROLES and _has_user(current):
            answered = True
    if current:
        turns.append(tuple(current))
    return turns


def _has_user(messages: Iterable[Message]) -> bool:
    return any(m.role is MessageRole.USER for m in messages)
