"""The one client layer for every model call: applications, simulated users, annotators.

Build an :class:`EndpointConfig`, open an :class:`LLMClient` on it and ``await
client.chat(ChatRequest(...))``. The mock OpenAI-compatible server lives in
:mod:`corix.llm.mock_server` and is imported on its own.
"""

from corix.domain import LOCAL_PREFIX, MOCK_BASE_URL, EndpointConfig
from corix.llm.cache import ResponseCache
from corix.llm.call_errors import ModelCallError, TransportError
from corix.llm.cancellation import raise_if_cancelling
from corix.llm.client import LLMClient
from corix.llm.concurrency import concurrency_share, even_share
from corix.llm.http_transport import HTTPConnections, read_reply
from corix.llm.local_model import resolve_model_file
from corix.llm.local_transport import require_local_extra
from corix.llm.mock_model import MOCK_MODEL_NAME, MockModel
from corix.llm.models import ChatMessage, ChatRequest, ChatResponse
from corix.llm.rate_limit import Limiter, LimiterFactory, RateLimiter, shared_limits
from corix.llm.scripted import ScriptedTransport
from corix.llm.structured import most_reply_tokens, reply_tokens
from corix.llm.tokens import estimate_messages_tokens, estimate_tokens, usable_context
from corix.llm.transport import RawCompletion, Transport
from corix.llm.usage import UsageSnapshot
from corix.llm.window import window_in_refusal

__all__ = [
    "LOCAL_PREFIX",
    "MOCK_BASE_URL",
    "MOCK_MODEL_NAME",
    "ChatMessage",
    "ChatRequest",
    "ChatResponse",
    "EndpointConfig",
    "HTTPConnections",
    "LLMClient",
    "Limiter",
    "LimiterFactory",
    "MockModel",
    "ModelCallError",
    "RateLimiter",
    "RawCompletion",
    "ResponseCache",
    "ScriptedTransport",
    "Transport",
    "TransportError",
    "UsageSnapshot",
    "concurrency_share",
    "estimate_messages_tokens",
    "estimate_tokens",
    "even_share",
    "most_reply_tokens",
    "raise_if_cancelling",
    "read_reply",
    "reply_tokens",
    "require_local_extra",
    "resolve_model_file",
    "shared_limits",
    "usable_context",
    "window_in_refusal",
]
