"""The seam between the client and whatever answers a request (HTTP, scripted mock…)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from corix.domain import EndpointConfig, ToolCall
from corix.llm.models import ChatRequest


@dataclass(frozen=True, slots=True)
class RawCompletion:
    """What one successful attempt returned, before the client adds its bookkeeping."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None
    cached_prompt_tokens: int | None = None
    """Prompt tokens served from a kept prefix instead of evaluated, where reported."""
    tool_calls: tuple[ToolCall, ...] = ()
    refusal: str | None = None


def cached_tokens(usage: Mapping[str, Any]) -> int | None:
    """``usage.prompt_tokens_details.cached_tokens`` of an OpenAI-shaped reply, if a count."""
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    return (
        cached if isinstance(cached, int) and not isinstance(cached, bool) and cached >= 0 else None
    )


class Transport(Protocol):
    """Sends one attempt of a request.

    ``send`` raises :class:`~corix.llm.call_errors.TransportError` for failures it can
    classify and :class:`TimeoutError` when no answer came within ``timeout`` seconds.
    """

    async def send(
        self, request: ChatRequest, endpoint: EndpointConfig, timeout: float
    ) -> RawCompletion: ...

    async def aclose(self) -> None: ...
