"""A stable fingerprint of a request, shared by the response cache and the mock model."""

from __future__ import annotations

import hashlib
import json

from corix.domain import JsonObject
from corix.llm.models import ChatRequest


def canonical_request(request: ChatRequest) -> JsonObject:
    """Everything that can change a model's answer, in plain JSON types.

    Tool calls, tool results and tools appear only where a request has them, so a plain
    request's digest (and its cached reply) stays what it was before corix knew of tools.
    """
    canonical: JsonObject = {
        "model": request.model,
        "messages": [
            [m.role, m.content] if m.is_plain else [m.role, m.content, m.to_openai()]
            for m in request.messages
        ],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "response_format": request.response_format,
        "extra": request.extra,
    }
    if request.tools is not None:
        canonical["tools"] = request.tools
    return canonical


def request_digest(request: ChatRequest, *, scope: str = "") -> str:
    """SHA-256 hex digest of the canonical request; ``scope`` separates e.g. endpoints."""
    payload = json.dumps(
        [scope, canonical_request(request)],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    # surrogatepass: a reply carrying a lone surrogate comes back in the next request's
    # history; it must hash (distinctly and stably), not raise.
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()
