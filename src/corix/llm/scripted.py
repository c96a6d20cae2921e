"""A transport that answers from a :class:`MockModel` in-process, for offline runs and tests.

It goes through the same client path as HTTP (rate limits, retries, cache, accounting);
``failures`` are raised by the first attempts, in order, to exercise the retry logic.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from corix.domain import EndpointConfig
from corix.llm.call_errors import TransportError
from corix.llm.mock_model import MockModel
from corix.llm.models import ChatRequest
from corix.llm.tokens import estimate_prompt_tokens, estimate_tokens
from corix.llm.transport import RawCompletion


class ScriptedTransport:
    """Replies with ``model`` (a default :class:`MockModel` if omitted) after ``latency_s``."""

    def __init__(
        self,
        model: MockModel | None = None,
        *,
        failures: Iterable[TransportError] = (),
        latency_s: float = 0.0,
    ) -> None:
        self.model = model or MockModel()
        self.latency_s = latency_s
        self.requests: list[ChatRequest] = []
        self._failures = iter(failures)

    async def send(
        self, request: ChatRequest, endpoint: EndpointConfig, timeout: float
    ) -> RawCompletion:
        self.requests.append(request)
        if self.latency_s:
            async with asyncio.timeout(timeout):
                await asyncio.sleep(self.latency_s)
        failure = next(self._failures, None)
        if failure is not None:
            raise failure
        text, tool_calls = self.model.answer(request)
        return RawCompletion(
            text=text,
            model=request.model or self.model.name,
            prompt_tokens=estimate_prompt_tokens(request),
            completion_tokens=estimate_tokens(text),
            tool_calls=tool_calls,
        )

    async def aclose(self) -> None:
        """Nothing to release."""
