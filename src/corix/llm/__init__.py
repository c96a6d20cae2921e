"""The one client layer for every model call: applications, simulated users, annotators.

Build an :class:`EndpointConfig`, open an :class:`LLMClient` on it and ``await
client.chat(ChatRequest(...))``. The mock OpenAI-compatible server lives in
:mod:`corix.llm.mock_server` and is imported on its own.
"""

from corix.llm.cache import ResponseCache
from corix.llm.client import LLMClient
from corix.llm.endpoint import MOCK_BASE_URL, EndpointConfig
from corix.llm.errors import ModelCallError, TransportError
from corix.llm.http_transport import HTTPConnections, OpenAIHTTPTransport
from corix.llm.mock_model import MockModel, Script
from corix.llm.models import ChatMessage, ChatRequest, ChatResponse
from corix.llm.scripted import ScriptedTransport
from corix.llm.transport import RawCompletion, Transport
from corix.llm.usage import EndpointUsage, UsageLedger, UsageSnapshot

__all__ = [
    "MOCK_BASE_URL",
    "ChatMessage",
    "ChatRequest",
    "ChatResponse",
    "EndpointConfig",
    "EndpointUsage",
    "HTTPConnections",
    "LLMClient",
    "MockModel",
    "ModelCallError",
    "OpenAIHTTPTransport",
    "RawCompletion",
    "ResponseCache",
    "Script",
    "ScriptedTransport",
    "Transport",
    "TransportError",
    "UsageLedger",
    "UsageSnapshot",
]
