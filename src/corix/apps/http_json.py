"""Adapter for generic HTTP JSON endpoints (``http:URL?path=a.b.0.c``).

Options: ``body`` — a Jinja template of the JSON request body, given ``text`` (the user's
message) and ``history`` (earlier turns as ``[{"role", "content"}]``), filtered through
``tojson``; ``path`` — where the reply text sits in the JSON response (dots, list
indices as numbers); ``key_env`` / ``key_header`` — a secret header from the environment.
Requests go through corix's client layer, so retries, timeouts and limits apply.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import aiohttp
from jinja2 import StrictUndefined

from corix.apps.base import Application, AppReply, AppSession
from corix.apps.options import endpoint_config, endpoint_options
from corix.apps.specs import AdapterSpec
from corix.config import BoundedSandbox, render_bounded
from corix.errors import CorixError
from corix.llm import (
    ChatMessage,
    ChatRequest,
    EndpointConfig,
    LLMClient,
    ModelCallError,
    RawCompletion,
    TransportError,
    UsageSnapshot,
    read_reply,
)

DEFAULT_BODY = '{"message": {{ text | tojson }}, "history": {{ history | tojson }}}'
_templates = BoundedSandbox(undefined=StrictUndefined, autoescape=False)


def extract_path(document: Any, path: str) -> Any:
    """Follow ``a.b.0.c`` through dicts and lists; raise ``KeyError`` naming the missing step."""
    value = document
    for step in path.split(".") if path else []:
        if isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        elif isinstance(value, Mapping) and step in value:
            value = value[step]
        else:
            raise KeyError(step)
    return value


class HttpJsonTransport:
    """Sends a chat request as a templated JSON body and reads the reply at ``path``."""

    def __init__(self, url: str, body_template: str, path: str, headers: dict[str, str]) -> None:
        self.url = url
        self.body = _templates.from_string(body_template)
        self.path = path
        self.headers = headers
        self._http: aiohttp.ClientSession | None = None

    async def send(
        self, request: ChatRequest, endpoint: EndpointConfig, timeout: float
    ) -> RawCompletion:
        if self._http is None:
            self._http = aiohttp.ClientSession()
        *history, last = request.messages
        body = render_bounded(
            self.body, {"text": last.content, "history": [m.to_openai() for m in history]}
        )
        try:
            async with self._http.post(
                self.url,
                data=body,
                headers={"Content-Type": "application/json", **self.headers},
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                # Bounded like every body corix reads: an endless reply fails the attempt.
                raw = await read_reply(response, endpoint.max_reply_bytes)
                if response.status >= 400:
                    retry_after = response.headers.get("Retry-After")
                    raise TransportError.from_status(
                        response.status,
                        raw[:200].decode("utf-8", "replace"),
                        float(retry_after) if retry_after and retry_after.isdigit() else None,
                    )
        except aiohttp.ClientError as exc:
            raise TransportError(f"connection failed: {exc}", retryable=True) from None
        try:
            text = extract_path(json.loads(raw), self.path)
        except ValueError:  # not JSON, or not even UTF-8
            raise TransportError("response is not JSON", retryable=True) from None
        except RecursionError:
            raise TransportError("response JSON is nested too deeply", retryable=True) from None
        except KeyError as exc:
            raise TransportError(
                f"response has no '{exc.args[0]}' on path '{self.path}'", retryable=False
            ) from None
        if not isinstance(text, str):
            raise TransportError(f"value at '{self.path}' is not text", retryable=False)
        return RawCompletion(text=text, model="http", prompt_tokens=0, completion_tokens=0)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()


class HttpJsonSession(AppSession):
    def __init__(self, client: LLMClient) -> None:
        self._client = client
        self._messages: list[ChatMessage] = []

    async def respond(self, text: str) -> AppReply:
        request = ChatRequest(
            model="http", messages=[*self._messages, ChatMessage(role="user", content=text)]
        )
        try:
            response = await self._client.chat(request)
        except ModelCallError as exc:
            return AppReply(error=str(exc))
        self._messages = [*request.messages, ChatMessage(role="assistant", content=response.text)]
        return AppReply(text=response.text)

    async def replay(self, history: Sequence[tuple[str, str]]) -> bool:
        for user_text, reply in history:
            self._messages.append(ChatMessage(role="user", content=user_text))
            self._messages.append(ChatMessage(role="assistant", content=reply))
        return True


class HttpJsonApplication(Application):
    def __init__(self, client: LLMClient, url: str) -> None:
        self._client = client
        self.url = url

    async def open(self, auth: Mapping[str, Any] | None = None) -> None:
        """Credentials come from ``key_env``; ``auth`` is not used."""

    async def version(self) -> str:
        return f"http endpoint {self.url}"

    async def start_session(self) -> AppSession:
        return HttpJsonSession(self._client)

    async def close(self) -> None:
        await self._client.aclose()

    def usage(self) -> UsageSnapshot:
        return self._client.usage.snapshot()


_OWN_OPTIONS = ("path", "body")


def http_adapter(spec: AdapterSpec) -> Application:
    settings, own = endpoint_options(spec, _OWN_OPTIONS)
    path = own.get("path")
    if not path:
        raise CorixError("http adapter needs the 'path' option: where the reply text sits")
    headers = dict(settings.pop("headers", None) or {})
    key_env = settings.pop("key_env", None)
    key_header = settings.pop("key_header", None)
    if key_env:
        key = os.environ.get(key_env)
        if key is None:
            raise CorixError(f"http adapter: ${key_env} is unset")
        headers[str(key_header or "Authorization")] = key
    endpoint = endpoint_config(
        spec,
        {
            "name": spec.target,
            "max_concurrency": 64,
            "max_retries": 3,
            "model": "http",
            **settings,
            "base_url": spec.target,
        },
    )
    transport = HttpJsonTransport(
        spec.target, str(own.get("body", DEFAULT_BODY)), str(path), headers
    )
    client = LLMClient(endpoint, transport=transport, cache=spec.cache)
    return HttpJsonApplication(client, spec.target)
