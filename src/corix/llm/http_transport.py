"""OpenAI-compatible chat completions over HTTP, on aiohttp.

aiohttp rather than httpx or a provider SDK: on a 2-core machine at a few hundred
concurrent calls, httpx's connection pool cost 14–22 ms of CPU per call against about
0.5 ms for aiohttp. Each call does the minimum: one ``json.dumps``, one POST on a shared
keep-alive session, one ``json.loads``; token counts are estimated only when the server
reports none.
"""

from __future__ import annotations

import json
import time
from email.utils import parsedate_to_datetime

import aiohttp

from corix.domain import EndpointConfig, JsonObject
from corix.llm.call_errors import TransportError
from corix.llm.models import ChatRequest
from corix.llm.openai_reply import error_text, parse_completion
from corix.llm.transport import RawCompletion

_RETRY_AFTER_STATUSES = frozenset({429, 503})
_ERROR_DETAIL_CHARS = 200
_READ_CHUNK = 64 * 1024


class HTTPConnections:
    """Keep-alive connections (one aiohttp session) that several transports can share.

    A run opens one for every client it makes. A dialogue's simulated user and the
    application under test call in turn, so when one server answers both, the second
    call takes the connection the first released instead of opening its own: at 1,000
    dialogues in flight that is 1,000 connections fewer to open, and no second wave of
    connects stalls the run. Each client's concurrency slots bound its requests in
    flight, so a shared pool sets no limit of its own (``max_connections`` 0).

    Whoever makes it owns it and closes it after the transports that use it.
    """

    def __init__(self, *, max_connections: int = 0) -> None:
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        # Opened on first use because aiohttp binds a session to the running event loop.
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self._max_connections, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=None)
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class OpenAIHTTPTransport:
    """POSTs to ``{base_url}/chat/completions`` over keep-alive connections.

    Without ``connections`` it keeps a pool of its own of at most ``max_connections``
    (which should match the caller's concurrency, so that no call waits for a socket
    while holding a concurrency slot) and closes it in :meth:`aclose`; shared
    ``connections`` belong to the caller.
    """

    def __init__(
        self, *, max_connections: int = 100, connections: HTTPConnections | None = None
    ) -> None:
        self._owns_connections = connections is None
        self._connections = connections or HTTPConnections(max_connections=max_connections)

    async def send(
        self, request: ChatRequest, endpoint: EndpointConfig, timeout: float
    ) -> RawCompletion:
        session = self._connections.session()
        body = json.dumps(_payload(request, endpoint)).encode()
        try:
            async with session.post(
                endpoint.base_url + "/chat/completions",
                data=body,
                headers=request_headers(endpoint),
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                raw = await read_reply(response, endpoint.max_reply_bytes)
                status = response.status
                retry_after = response.headers.get("Retry-After")
                streamed = response.content_type == "text/event-stream"
        except TimeoutError:
            raise  # aiohttp's timeouts are also ClientErrors; the client reports them as such
        except aiohttp.ClientError as exc:
            reason = str(exc) or type(exc).__name__  # its repr is a wall of internals
            raise TransportError(f"connection error: {reason}", retryable=True) from exc
        if status != 200:
            wait = parse_retry_after(retry_after) if status in _RETRY_AFTER_STATUSES else None
            raise TransportError.from_status(status, _error_detail(raw), wait)
        return parse_completion(raw, request, streamed=streamed)

    async def aclose(self) -> None:
        if self._owns_connections:
            await self._connections.aclose()


async def read_reply(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body of ``response``, read no further than ``limit`` bytes: a server that
    streams without end fails the attempt (not retried: it would only stream again) and
    memory stays bounded by the limit."""
    declared = response.content_length
    if declared is not None and declared > limit:
        raise _too_large(limit, f"it declares {declared:,} bytes")
    if declared is not None and "chunked" not in response.headers.get("Transfer-Encoding", ""):
        return await response.read()  # aiohttp reads no further than the declared length
    body = bytearray()
    async for chunk in response.content.iter_chunked(_READ_CHUNK):
        body += chunk
        if len(body) > limit:
            raise _too_large(limit, "it went on")
    return bytes(body)


def _too_large(limit: int, how: str) -> TransportError:
    return TransportError(
        f"reply larger than {limit:,} bytes (max_reply_bytes); {how}", retryable=False
    )


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delay in seconds or an HTTP date)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _payload(request: ChatRequest, endpoint: EndpointConfig) -> JsonObject:
    payload = dict(request.extra)
    payload["model"] = request.model or endpoint.model
    payload["messages"] = [m.to_openai() for m in request.messages]
    if request.temperature is not None:
        payload["temperature"] = request.temperature
    if request.max_tokens is not None:
        payload["max_tokens"] = request.max_tokens
    if request.seed is not None:
        payload["seed"] = request.seed
    if request.response_format is not None:
        payload["response_format"] = request.response_format
    if request.tools is not None:
        payload["tools"] = request.tools
    return payload


def request_headers(endpoint: EndpointConfig) -> dict[str, str]:
    """The headers of a request to ``endpoint``: its extra headers and the API key."""
    headers = {"Content-Type": "application/json", **endpoint.headers}
    if endpoint.key_env is not None:
        key = endpoint.api_key()
        if not key:
            raise TransportError(
                f"environment variable {endpoint.key_env} (the API key) is not set",
                retryable=False,
            )
        if endpoint.key_header is not None:
            headers[endpoint.key_header] = key
        else:
            headers["Authorization"] = f"Bearer {key}"
    return headers


def _error_detail(raw: bytes) -> str:
    text = raw.decode(errors="replace")
    try:
        error = json.loads(text)["error"]
    except (ValueError, KeyError, TypeError):
        return text[:_ERROR_DETAIL_CHARS]
    if not isinstance(error, dict):
        return str(error)[:_ERROR_DETAIL_CHARS]
    return error_text(error)[:_ERROR_DETAIL_CHARS]
