"""Structured output that negotiates: ``json_schema``, then ``json_object``, then the prompt.

Callers ask for JSON the strict way (OpenAI's ``json_schema`` response format). Many
servers accept less: llama-cpp-python's server refuses ``json_schema`` with an HTTP 500
validation error and takes ``text`` or ``json_object`` only; others take no
``response_format`` at all. A client adapts each request to what its endpoint accepts:

* ``json_schema`` — sent as asked;
* ``json_object`` — ``{"type": "json_object", "schema": …}``, the schema also written into
  the prompt: llama.cpp's servers (and Fireworks, Together) then constrain the reply to
  the schema by a grammar; servers that know no ``schema`` field ignore it;
* ``prompt`` — no ``response_format``; the schema in the prompt, the caller validates.

With ``structured_output: auto`` (the default) an endpoint starts at ``json_schema`` and
steps down, once, when a reply refuses the format (:func:`refuses_format`); the step is
remembered by the client, so the refusal costs one request. Callers validate every reply
anyway, so a weaker mode never lets malformed output through.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

from corix.domain import JsonObject, JsonSchema
from corix.llm.models import ChatMessage, ChatRequest

StructuredMode = Literal["json_schema", "json_object", "prompt"]
MODES: tuple[StructuredMode, ...] = ("json_schema", "json_object", "prompt")

__all__ = [
    "MODES",
    "SCHEMA_PROMPT_MARK",
    "StructuredMode",
    "adapt_request",
    "grammar_schema",
    "most_reply_tokens",
    "next_mode",
    "refuses_format",
    "reply_tokens",
    "wants_schema",
]

SCHEMA_PROMPT_MARK = "It must match this JSON schema:\n"
"""Precedes the schema written into a prompt (the mock model reads it back)."""

_FORMAT_REFUSAL = re.compile(r"response_format|json_schema|json_object|structured output", re.I)


def refuses_format(status: int | None, reason: str) -> bool:
    """Whether a failed attempt was the server refusing the requested ``response_format``."""
    return status in (400, 422, 500, 501) and _FORMAT_REFUSAL.search(reason) is not None


def next_mode(mode: StructuredMode) -> StructuredMode | None:
    """The weaker mode to try after ``mode`` was refused (``None``: nothing weaker)."""
    index = MODES.index(mode)
    return MODES[index + 1] if index + 1 < len(MODES) else None


def wants_schema(request: ChatRequest) -> bool:
    """Whether ``request`` asks for output that fits a JSON schema."""
    return _json_schema(request.response_format) is not None


def adapt_request(request: ChatRequest, mode: StructuredMode) -> ChatRequest:
    """``request`` as an endpoint in ``mode`` accepts it (unchanged without a JSON schema)."""
    schema = _json_schema(request.response_format)
    if schema is None or mode == "json_schema":
        return request
    instruction = (
        "Reply with exactly one JSON object and nothing else. "
        f"{SCHEMA_PROMPT_MARK}{json.dumps(schema, ensure_ascii=False, sort_keys=True)}"
    )
    messages = [*request.messages, ChatMessage(role="system", content=instruction)]
    response_format = (
        {"type": "json_object", "schema": grammar_schema(schema)} if mode == "json_object" else None
    )
    return request.model_copy(update={"messages": messages, "response_format": response_format})


def _json_schema(response_format: JsonObject | None) -> JsonSchema | None:
    if not response_format or response_format.get("type") != "json_schema":
        return None
    inner = response_format.get("json_schema") or {}
    schema = inner.get("schema") if isinstance(inner, dict) else None
    return schema if isinstance(schema, dict) else None


_LONG_REPEAT_KEYS = ("maxLength", "maxItems")
MAX_GRAMMAR_REPEAT = 256
"""llama.cpp refuses grammars that repeat a rule thousands of times (a ``maxLength`` of
2,000 characters); such bounds are left to the caller's validation of every reply."""


def grammar_schema(schema: Any) -> Any:
    """``schema`` as llama.cpp's grammar can hold it: length bounds above
    :data:`MAX_GRAMMAR_REPEAT` left out, and small integer ranges spelled out as enums,
    since its grammar ignores ``minimum`` and ``maximum`` (a judge asked for a severity
    from 0 to 7 was seen answering 100)."""
    if isinstance(schema, list):
        return [grammar_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    values = _integer_range(schema)
    if values is not None:
        return {"enum": values}
    return {
        key: grammar_schema(value)
        for key, value in schema.items()
        if not (key in _LONG_REPEAT_KEYS and isinstance(value, int) and value > MAX_GRAMMAR_REPEAT)
    }


def _integer_range(schema: JsonSchema) -> list[int] | None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if schema.get("type") != "integer" or not isinstance(low, int) or not isinstance(high, int):
        return None
    if not 0 <= high - low < MAX_GRAMMAR_REPEAT:
        return None
    return list(range(low, high + 1))


_CHARS_PER_TOKEN = 3
"""Few enough characters per token that the size is an upper bound for English and JSON."""
_UNBOUNDED_TEXT_TOKENS = 128
_SIZE_MARGIN = 1.25


def reply_tokens(schema: JsonSchema) -> int:
    """Tokens enough for the longest reply that fits ``schema`` (with a margin)."""
    return math.ceil(_size(schema, _CHARS_PER_TOKEN) * _SIZE_MARGIN) + 16


def most_reply_tokens(schema: JsonSchema) -> int:
    """Tokens no reply fitting ``schema`` exceeds even at one token per character: a small
    model's degenerate text ("1.1.1.1…") comes close, and cuts a reply :func:`reply_tokens`
    sized."""
    return math.ceil(_size(schema, 1) * _SIZE_MARGIN) + 16


def _size(schema: Any, chars_per_token: int) -> int:
    if not isinstance(schema, dict):
        return 1
    if "anyOf" in schema:
        return max(_size(option, chars_per_token) for option in schema["anyOf"])
    if "enum" in schema:
        return max(_text_tokens(json.dumps(value), chars_per_token) for value in schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        return 2 + sum(
            _text_tokens(json.dumps(key), chars_per_token) + 2 + _size(v, chars_per_token)
            for key, v in properties.items()
        )
    if kind == "string":
        limit = schema.get("maxLength")
        if not isinstance(limit, int):
            return _UNBOUNDED_TEXT_TOKENS
        return _text_tokens("x" * limit, chars_per_token) + 2
    if kind in ("integer", "number"):
        return 4
    return 1


def _text_tokens(text: str, chars_per_token: int) -> int:
    return len(text) // chars_per_token + 1
