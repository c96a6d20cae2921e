"""Running a pack's tools: a model's tool call answered from the pack's scripted results.

Tools are data, never code: a call's arguments are read as JSON (bounded in size and
depth, since a model's arguments are as untrusted as its text) and matched against each
result's ``when``; nothing the model writes is run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from corix.domain import JsonObject, Message, ToolCall
from corix.scenarios.guardrails import same_value
from corix.scenarios.models import PackTool, ScenarioPack, ToolResult

__all__ = ["MAX_ARGUMENT_CHARS", "Toolbox"]

MAX_ARGUMENT_CHARS = 16_384
"""Longer arguments are refused without being parsed."""


class Toolbox:
    """The tools one pack gives an application, and their scripted answers."""

    def __init__(self, tools: Sequence[PackTool]) -> None:
        self._tools = {tool.name: tool for tool in tools}

    @classmethod
    def of(cls, pack: ScenarioPack) -> Toolbox | None:
        """The pack's toolbox; ``None`` when the pack gives no tools."""
        return cls(pack.tools) if pack.tools else None

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    @property
    def forbidden(self) -> frozenset[str]:
        """The tools the guardrail forbids calling."""
        return frozenset(name for name, tool in self._tools.items() if tool.forbidden)

    def definitions(self) -> list[JsonObject]:
        """The tools as OpenAI's ``tools`` request field declares them."""
        return [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            for tool in self._tools.values()
        ]

    def run(self, call: ToolCall) -> Message:
        """The tool message answering ``call``: a scripted result, or the error a real
        tool would give (unknown tool, arguments that are not a JSON object, no result
        scripted for them)."""
        tool = self._tools.get(call.name)
        if tool is None:
            return Message.tool(call, "", error=f"no tool named {call.name!r}")
        arguments = _arguments(call.arguments)
        if isinstance(arguments, str):
            return Message.tool(call, "", error=arguments)
        result = _matching(tool.results, arguments)
        if result is None:
            return Message.tool(call, "", error="no result for these arguments")
        if result.error is not None:
            return Message.tool(call, "", error=result.error)
        return Message.tool(call, result.text or "")


def _arguments(raw: str) -> JsonObject | str:
    """The arguments as a JSON object, or why they are not one."""
    if len(raw) > MAX_ARGUMENT_CHARS:
        return f"arguments longer than {MAX_ARGUMENT_CHARS:,} characters"
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return "arguments are not valid JSON"
    return value if isinstance(value, dict) else "arguments are not a JSON object"


def _matching(results: Sequence[ToolResult], arguments: Mapping[str, Any]) -> ToolResult | None:
    for result in results:
        if all(
            key in arguments and same_value(arguments[key], value)
            for key, value in result.when.items()
        ):
            return result
    return None
