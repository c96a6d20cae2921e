"""A deterministic stand-in for a language model: same request, same reply.

Without a script, a request whose ``response_format`` carries a JSON schema gets a
valid instance of that schema, and any other request gets a short text naming the last
user message — leaving out a quoted ``<assistant_reply>`` block, the data a simulated
user is shown, so that a mock user answers the request instead of echoing the reply.
Both are drawn from the request's digest, so changing the seed (or any other part of the
request) changes the reply. ``judge_noise`` makes a JSON reply a noisy judge's instead: a
share ``1 - judge_noise`` of seeds give the request's one settled answer (drawn from the
request without its seed), the rest a fresh draw of their own; 1 (the default) draws every
seed afresh, 0 answers the same whatever the seed. A script overrides this: either a
callable ``(ChatRequest) -> str`` or a list of canned replies consumed in order.

A request that offers tools makes the mock an agent (:meth:`MockModel.answer`): after a
user message it calls the first tool, with arguments drawn from the user's words (the
first number for a numeric parameter, the message for a text one); after a tool result
it answers in text that repeats what the tool returned.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence

from corix.domain import JsonObject, JsonSchema, ToolCall
from corix.errors import CorixError
from corix.llm.hashing import request_digest
from corix.llm.models import ChatRequest
from corix.llm.schema_instance import instance_of, schema_of_response_format
from corix.llm.structured import SCHEMA_PROMPT_MARK

Script = Callable[[ChatRequest], str] | Sequence[str]

MOCK_MODEL_NAME = "corix-mock"
_SNIPPET_CHARS = 80
_TOOL_RESULT_CHARS = 2000


class MockModel:
    """Answers chat requests deterministically; see the module docstring for the rules."""

    def __init__(
        self,
        script: Script | None = None,
        *,
        name: str = MOCK_MODEL_NAME,
        judge_noise: float = 1.0,
    ) -> None:
        if not 0.0 <= judge_noise <= 1.0:
            raise ValueError(f"judge_noise is a share from 0 to 1, got {judge_noise}")
        self.name = name
        self.judge_noise = judge_noise
        self._script = script
        self._next_canned = 0

    def answer(self, request: ChatRequest) -> tuple[str, tuple[ToolCall, ...]]:
        """The reply's text and tool calls (see the module docstring)."""
        last = request.messages[-1]
        if self._script is None and request.tools and last.role == "user":
            return "", (_tool_call(request.tools[0], last.content, request_digest(request)),)
        text = self.reply(request)
        if self._script is None and last.role == "tool":
            result = " ".join(last.content.split())[:_TOOL_RESULT_CHARS]
            text = f"{text} — {last.name or 'the tool'} says: {result}"
        return text, ()

    def reply(self, request: ChatRequest) -> str:
        if self._script is None:
            return self._default_reply(request)
        if callable(self._script):
            return self._script(request)
        if self._next_canned >= len(self._script):
            raise CorixError(f"the mock model's script of {len(self._script)} replies is exhausted")
        canned = self._script[self._next_canned]
        self._next_canned += 1
        return canned

    def _default_reply(self, request: ChatRequest) -> str:
        digest = request_digest(request)
        format_ = request.response_format or {}
        schema = schema_of_response_format(format_) if format_ else None
        if schema is None and format_.get("type") in (None, "json_object"):
            # Structured output asked for in the prompt (with or without json_object).
            schema = _schema_in_prompt(request)
        if schema is not None:
            rng = random.Random(int(digest[:16], 16))
            if self.judge_noise < 1.0 and rng.random() >= self.judge_noise:
                # This seed gives the settled answer (the default consumes no draw).
                settled = request_digest(request.model_copy(update={"seed": None}))
                rng = random.Random(int(settled[:16], 16))
            return json.dumps(instance_of(schema, rng), ensure_ascii=False)
        if format_.get("type") == "json_object":
            return json.dumps({"reply": _text_reply(request, digest)}, ensure_ascii=False)
        return _text_reply(request, digest)


def _schema_in_prompt(request: ChatRequest) -> JsonSchema | None:
    """The JSON schema a request spells out in its prompt (structured output by prompt)."""
    for message in reversed(request.messages):
        _, found, schema = message.content.partition(SCHEMA_PROMPT_MARK)
        if found:
            try:
                parsed = json.loads(schema)
            except ValueError:
                return None
            return parsed if isinstance(parsed, dict) else None
    return None


_QUOTED_REPLY = re.compile(r"<assistant_reply>.*?</assistant_reply>", re.DOTALL)


def _text_reply(request: ChatRequest, digest: str) -> str:
    user_messages = [m.content for m in request.messages if m.role == "user"]
    prompt = user_messages[-1] if user_messages else request.messages[-1].content
    return f"Mock reply {digest[:6]} to: {_snippet(_QUOTED_REPLY.sub(' ', prompt))}"


def _snippet(text: str) -> str:
    snippet = " ".join(text.split())
    if len(snippet) > _SNIPPET_CHARS:
        snippet = snippet[: _SNIPPET_CHARS - 1] + "…"
    return snippet


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _tool_call(tool: JsonObject, user_text: str, digest: str) -> ToolCall:
    """A call of ``tool`` (an OpenAI tool definition) with arguments from ``user_text``."""
    function = tool.get("function")
    function = function if isinstance(function, dict) else {}
    parameters = function.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    number = _NUMBER.search(user_text)
    arguments: JsonObject = {}
    for name, schema in properties.items() if isinstance(properties, dict) else ():
        kind = schema.get("type") if isinstance(schema, dict) else None
        if kind == "integer":
            arguments[name] = int(float(number.group())) if number else 1
        elif kind == "number":
            arguments[name] = float(number.group()) if number else 1.0
        elif kind == "boolean":
            arguments[name] = True
        else:
            arguments[name] = _snippet(user_text)
    return ToolCall(
        id=f"call_{digest[:12]}",
        name=str(function.get("name") or "tool"),
        arguments=json.dumps(arguments, ensure_ascii=False),
    )
