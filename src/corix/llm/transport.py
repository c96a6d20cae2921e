"""The seam between the client and whatever answers a request (HTTP, scripted mock…)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from corix.llm.endpoint import EndpointConfig
from corix.llm.models import ChatRequest


@dataclass(frozen=True, slots=True)
class RawCompletion:
    """What one successful attempt returned, before the client adds its bookkeeping."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None


class Transport(Protocol):
    """Sends one attempt of a request.

    ``send`` raises :class:`~corix.llm.errors.TransportError` for failures it can
    classify and :class:`TimeoutError` when no answer came within ``timeout`` seconds.
    """

    async def send(
        self, request: ChatRequest, endpoint: EndpointConfig, timeout: float
    ) -> RawCompletion: ...

    async def aclose(self) -> None: ...
