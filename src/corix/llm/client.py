"""The one client through which corix makes every model call."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from types import TracebackType

from corix.domain import EndpointConfig
from corix.llm.backoff import retry_delay
from corix.llm.cache import ResponseCache, cache_key
from corix.llm.call_errors import ModelCallError, TransportError
from corix.llm.cancellation import raise_if_cancelling
from corix.llm.concurrency import (
    AdaptiveConcurrency,
    ConcurrencyLimit,
    FixedConcurrency,
    Outcome,
    Slot,
    shared_bound,
)
from corix.llm.http_transport import HTTPConnections, OpenAIHTTPTransport
from corix.llm.local_transport import DEFAULT_CONTEXT_WINDOW, LocalTransport
from corix.llm.models import ChatRequest, ChatResponse
from corix.llm.rate_limit import limiter_for
from corix.llm.scripted import ScriptedTransport
from corix.llm.structured import (
    StructuredMode,
    adapt_request,
    next_mode,
    refuses_format,
    wants_schema,
)
from corix.llm.timeouts import AdaptiveTimeout
from corix.llm.tokens import estimate_request_tokens
from corix.llm.transport import RawCompletion, Transport
from corix.llm.usage import UsageLedger
from corix.llm.window import ask_server, window_in_refusal

logger = logging.getLogger(__name__)


class LLMClient:
    """Calls one endpoint with bounded concurrency, rate limits, retries, cache and accounting.

    A call first looks in the cache (see :mod:`corix.llm.cache` for the rule). On a
    miss, each attempt waits for the endpoint's rate limits, then for a concurrency slot
    (:mod:`corix.llm.concurrency`: adaptive up to ``max_concurrency`` unless fixed), which
    it holds only while the request is in flight; the timeout counts from then.
    Timeouts, connection errors, malformed replies, 408, 429 and 5xx are retried up to
    ``max_retries`` times with capped, jittered exponential backoff that honours
    ``Retry-After``; other failures and exhausted retries raise :class:`ModelCallError`.

    Without ``transport`` the client builds one from ``endpoint.transport`` and closes
    it in :meth:`aclose`; for an HTTP endpoint it uses ``connections`` when given (see
    :class:`HTTPConnections`). A transport, connections, cache or ledger passed in belongs
    to the caller, so several clients can share them.
    """

    def __init__(
        self,
        endpoint: EndpointConfig,
        *,
        transport: Transport | None = None,
        cache: ResponseCache | None = None,
        usage: UsageLedger | None = None,
        connections: HTTPConnections | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.usage = usage if usage is not None else UsageLedger()
        self._cache = cache
        self._owns_transport = transport is None
        self._transport = (
            transport if transport is not None else _default_transport(endpoint, connections)
        )
        self.concurrency = _concurrency_limit(endpoint)
        self.timeouts = AdaptiveTimeout(endpoint)
        self._limiter = limiter_for(endpoint)
        self._rng = random.Random()
        chosen = endpoint.structured_output
        self.structured_mode: StructuredMode = "json_schema" if chosen == "auto" else chosen
        """How this endpoint is asked for JSON now; ``auto`` steps it down on refusal."""
        local_window = DEFAULT_CONTEXT_WINDOW if endpoint.transport == "local" else None
        self.context_window: int | None = endpoint.context_window or local_window
        """The window prompts are fitted to: declared, the local model's, reported by the
        server (:meth:`known_context_window`) or named by a refusal, the smallest of them."""
        self._cache_prompt = False
        self._asking_server = asyncio.Lock()
        self._server_asked = False

    async def known_context_window(self) -> int | None:
        """:attr:`context_window`, once the server was asked (an HTTP endpoint, once): its
        window, and whether it is llama.cpp's server, whose prompt cache is then asked for
        (``cache_prompt``) so that prompts sharing a prefix reuse its evaluation."""
        if self.endpoint.transport != "openai" or self._server_asked:
            return self.context_window
        async with self._asking_server:
            if not self._server_asked:
                facts = await ask_server(self.endpoint)
                self._server_asked = True
                self._narrow_window(facts.context_window)
                if facts.llama_cpp:
                    self._cache_prompt = True
        return self.context_window

    def _narrow_window(self, window: int | None) -> None:
        if window is not None and (self.context_window is None or window < self.context_window):
            logger.info("endpoint %s: context window %d tokens", self.endpoint.name, window)
            self.context_window = window

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Send ``request`` (an empty ``model`` means the endpoint's default model)."""
        request = _with_endpoint_defaults(request, self.endpoint)
        if self._cache_prompt:
            request = request.model_copy(update={"extra": {"cache_prompt": True, **request.extra}})
        key = None
        if self._cache is not None:
            started = time.perf_counter()
            key = cache_key(request, self.endpoint)
            hit = self._cache.get(key)
            if hit is not None:
                self.usage.record_cache_hit(self.endpoint)
                lookup_ms = (time.perf_counter() - started) * 1000.0
                return _response(hit, latency_ms=lookup_ms, cached=True, attempts=0)
        return await self._call(request, key)

    async def aclose(self) -> None:
        if self._owns_transport:
            await self._transport.aclose()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _call(self, request: ChatRequest, key: str | None) -> ChatResponse:
        endpoint = self.endpoint
        # Only a token quota reads the estimate (a cheap sum, but one over every message).
        estimate = estimate_request_tokens(request) if endpoint.tokens_per_minute else 0
        attempts = 0
        first_sent: float | None = None  # the call's total time counts from here
        queued_s = 0.0  # ... but not a retry's wait in corix's own queues
        while True:
            attempts += 1
            queued = time.monotonic()
            await self._limiter.acquire(estimate)
            mode = self.structured_mode
            try:
                async with self.concurrency.slot() as slot:
                    if first_sent is None:
                        first_sent = time.monotonic()
                    else:
                        queued_s += time.monotonic() - queued
                    # Read once the slot is held: a call that waited for it sends in the
                    # mode a refusal seen meanwhile stepped down to, not the one it queued in.
                    mode = self.structured_mode
                    started = time.perf_counter()
                    completion = await self._attempt(
                        adapt_request(request, mode),
                        slot,
                        time.monotonic() - first_sent - queued_s,
                    )
                    latency_s = time.perf_counter() - started
                    self.timeouts.observe(latency_s)
                    slot.succeeded(
                        Outcome(latency_s, completion.prompt_tokens, completion.completion_tokens)
                    )
            except TransportError as failure:
                raise_if_cancelling()  # a stop that surfaced as a failure is no failure
                if self._step_down(request, mode, failure):
                    continue
                if not failure.retryable:
                    self._narrow_window(window_in_refusal(failure.reason))
                if not failure.retryable or attempts > endpoint.max_retries:
                    self.usage.record_failure(endpoint, retries=attempts - 1)
                    raise ModelCallError(
                        endpoint.name, failure.reason, attempts, failure.status
                    ) from failure
                delay = retry_delay(
                    attempts,
                    base_s=endpoint.backoff_base_s,
                    max_s=endpoint.backoff_max_s,
                    retry_after_s=failure.retry_after_s,
                    rng=self._rng,
                )
                elapsed = time.monotonic() - (first_sent or time.monotonic()) - queued_s
                refusal = _refuse_wait(endpoint, failure, delay, elapsed, self.timeouts.deadline_s)
                if refusal is not None:
                    self.usage.record_failure(endpoint, retries=attempts - 1)
                    raise ModelCallError(
                        endpoint.name, refusal, attempts, failure.status
                    ) from failure
                self.usage.record_wait(endpoint, delay)
                logger.debug(
                    "endpoint %s: attempt %d failed (%s); retrying in %.2f s",
                    endpoint.name,
                    attempts,
                    failure.reason,
                    delay,
                )
                await asyncio.sleep(delay)
                continue
            spent = completion.prompt_tokens + completion.completion_tokens
            self._limiter.settle(estimate, spent)
            self.usage.record_success(endpoint, completion, retries=attempts - 1)
            if key is not None and self._cache is not None:
                self._cache.put(key, completion)
            return _response(
                completion,
                latency_ms=latency_s * 1000.0,
                cached=False,
                attempts=attempts,
                structured_output=mode if wants_schema(request) else None,
            )

    def _step_down(
        self, request: ChatRequest, mode: StructuredMode, failure: TransportError
    ) -> bool:
        """Whether the server refused ``mode`` and the next attempt uses a weaker one."""
        weaker = next_mode(mode)
        if (
            self.endpoint.structured_output != "auto"
            or weaker is None
            or not wants_schema(request)
            or not refuses_format(failure.status, failure.reason)
        ):
            return False
        if self.structured_mode == mode:  # concurrent calls may have stepped down already
            logger.info(
                "endpoint %s refused %s output (%s); asking with %s from now on",
                self.endpoint.name,
                mode,
                failure.reason,
                weaker,
            )
            self.structured_mode = weaker
        return True

    async def _attempt(self, request: ChatRequest, slot: Slot, elapsed: float) -> RawCompletion:
        """One attempt, its timeout cut to what is left of the call's deadline."""
        timeout = self.timeouts.timeout_s
        deadline = self.timeouts.deadline_s
        last = deadline is not None and deadline - elapsed < timeout
        if deadline is not None and last:
            timeout = max(deadline - elapsed, 0.001)
        try:
            return await self._transport.send(request, self.endpoint, timeout)
        except TimeoutError:
            if last:
                raise TransportError(
                    f"no reply within the call deadline of {deadline:g} s (call_deadline_s)",
                    retryable=False,
                ) from None
            slot.overloaded()
            raise TransportError(f"no reply within {timeout:g} s", retryable=True) from None
        except TransportError as failure:
            if failure.status in _OVERLOAD_STATUSES:
                slot.overloaded()
            raise


def _with_endpoint_defaults(request: ChatRequest, endpoint: EndpointConfig) -> ChatRequest:
    """``request`` with the endpoint's model, ``max_tokens`` and temperature where it sets
    none (one copy, made only when something is filled in)."""
    defaults: dict[str, object] = {}
    if not request.model:
        defaults["model"] = endpoint.model
    if request.max_tokens is None and endpoint.max_tokens is not None:
        defaults["max_tokens"] = endpoint.max_tokens
    if request.temperature is None and endpoint.temperature is not None:
        defaults["temperature"] = endpoint.temperature
    return request.model_copy(update=defaults) if defaults else request


def _refuse_wait(
    endpoint: EndpointConfig,
    failure: TransportError,
    delay: float,
    elapsed: float,
    deadline: float | None,
) -> str | None:
    """Why the call must not wait ``delay`` s before retrying, or ``None`` if it may."""
    asked = failure.retry_after_s
    if asked is not None and asked > endpoint.retry_after_max_s:
        return (
            f"{failure.reason}; the server asked to wait {asked:g} s, more than the "
            f"{endpoint.retry_after_max_s:g} s corix waits (retry_after_max_s)"
        )
    if deadline is not None and elapsed + delay > deadline:
        return (
            f"{failure.reason}; no reply within the call deadline of {deadline:g} s "
            "(call_deadline_s)"
        )
    return None


_OVERLOAD_STATUSES = frozenset({429, 503})


def _concurrency_limit(endpoint: EndpointConfig) -> ConcurrencyLimit:
    if endpoint.transport == "local":
        # Each model process answers one request at a time: one more in flight would only
        # queue there, its timeout running while it waits. Not adapted: the number is known
        # (adapting to the latency of prompts that differ 10× in what they evaluate once
        # kept the second of two processes idle for a whole pilot).
        return FixedConcurrency(endpoint.processes)
    bound = shared_bound(endpoint.max_concurrency)
    if not endpoint.adaptive_concurrency:
        return FixedConcurrency(bound)
    return AdaptiveConcurrency(
        initial=min(endpoint.initial_concurrency, bound), ceiling=bound, name=endpoint.name
    )


def _default_transport(endpoint: EndpointConfig, connections: HTTPConnections | None) -> Transport:
    if endpoint.transport == "mock":
        return ScriptedTransport()
    if endpoint.transport == "local":
        return LocalTransport(endpoint)
    return OpenAIHTTPTransport(max_connections=endpoint.max_concurrency, connections=connections)


def _response(
    completion: RawCompletion,
    *,
    latency_ms: float,
    cached: bool,
    attempts: int,
    structured_output: str | None = None,
) -> ChatResponse:
    return ChatResponse(
        text=completion.text,
        model=completion.model,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        latency_ms=latency_ms,
        cached=cached,
        attempts=attempts,
        structured_output=structured_output,
        finish_reason=completion.finish_reason,
        cached_prompt_tokens=completion.cached_prompt_tokens,
        tool_calls=completion.tool_calls,
        refusal=completion.refusal,
    )
