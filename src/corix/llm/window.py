"""How long a prompt an endpoint takes: declared, asked of the server, or learned from a refusal.

A judge's prompt is fitted to the endpoint's context window, so corix needs the window
before it sends anything. In order:

* declared: ``context_window`` in the endpoint's settings;
* a local model: the window it was loaded with;
* asked: llama.cpp's server says it under ``/props`` (``n_ctx``, and then it also takes
  ``cache_prompt``), vLLM as ``max_model_len`` of the model in ``/v1/models``;
* learned: a refusal naming the window ("maximum context length is 4096 tokens",
  "exceed context window of 4096") is read by :func:`window_in_refusal`, and the client
  remembers it, so the caller can refit the prompt instead of failing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import aiohttp

from corix.domain import EndpointConfig, JsonObject
from corix.llm.call_errors import TransportError
from corix.llm.http_transport import request_headers

DISCOVERY_TIMEOUT_S = 5.0
_MAX_BODY_BYTES = 1_000_000

_WINDOW_IN_REFUSAL = re.compile(
    r"(?:maximum context length is|context window of|context size of|"
    r"available context size \(|n_ctx\W{0,3})\s*(\d{3,8})",
    re.IGNORECASE,
)


def window_in_refusal(reason: str) -> int | None:
    """The context window a refusal of an overlong prompt names, or ``None``."""
    found = _WINDOW_IN_REFUSAL.search(reason)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class ServerFacts:
    """What an OpenAI-compatible server said about itself."""

    context_window: int | None = None
    llama_cpp: bool = False
    """llama.cpp's own server (it answers ``/props``): it takes ``cache_prompt``."""


async def ask_server(endpoint: EndpointConfig) -> ServerFacts:
    """The window ``endpoint``'s server reports, and whether it is llama.cpp's server.

    Best effort: a server that answers neither address (or refuses, or times out) gives
    empty facts, and the window is then learned from a refusal if ever needed.
    """
    try:
        headers = request_headers(endpoint)
    except TransportError:
        return ServerFacts()
    timeout = aiohttp.ClientTimeout(total=DISCOVERY_TIMEOUT_S)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers) as session:
        root = endpoint.base_url.removesuffix("/v1")
        props = await _get_json(session, root + "/props")
        if isinstance(props, dict) and (window := _llama_cpp_window(props)) is not None:
            return ServerFacts(context_window=window, llama_cpp=True)
        models = await _get_json(session, endpoint.base_url + "/models")
        return ServerFacts(context_window=_vllm_window(models, endpoint.model))


def _llama_cpp_window(props: JsonObject) -> int | None:
    settings = props.get("default_generation_settings")
    window = settings.get("n_ctx") if isinstance(settings, dict) else None
    window = props.get("n_ctx", window)
    return window if _is_window(window) else None


def _vllm_window(models: Any, model: str) -> int | None:
    entries = models.get("data") if isinstance(models, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("id") == model:
            window = entry.get("max_model_len")
            return window if _is_window(window) else None
    return None


def _is_window(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


async def _get_json(session: aiohttp.ClientSession, url: str) -> Any:
    try:
        async with session.get(url) as response:
            if response.status != 200:
                return None
            body = await response.content.read(_MAX_BODY_BYTES)
        return json.loads(body)
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return None
