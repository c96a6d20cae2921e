"""The process that holds a local model (llama-cpp-python) and answers one request at a time.

The model runs in its own process, not a thread of the event loop's process: generation
holds the GIL-free native code for seconds and a crashing native library (a build using
instructions the CPU forbids dies with SIGILL) must not take corix down with it.

Protocol over a :func:`multiprocessing.Pipe`: the worker first sends :class:`Ready` (or
:class:`Failed`); then, for each :class:`Job` it receives, one :class:`Done`. ``None``
stops it. A job is cancelled by writing its number into the shared ``cancel`` value: the
worker checks it after every generated token and stops generating.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import Synchronized
from typing import Any

from corix.domain import JsonObject
from corix.llm.transport import RawCompletion

PROMPT_CACHE_BYTES = 2 * 1024**3
"""Evaluated prompts kept in memory (a 135M model's state is ~25 kB a token, ~60 MB for a
judge's prompt). Every reply leaves one: at 512 MB, the eight a session's four harms and
two passes leave had pushed out each harm's guidelines before its next dialogue came
(190 of 2,500 prompt tokens reused)."""
_KEPT_LOGIT_ROWS = 1


@dataclass(frozen=True, slots=True)
class Ready:
    context_window: int


@dataclass(frozen=True, slots=True)
class Failed:
    reason: str


@dataclass(frozen=True, slots=True)
class Job:
    number: int
    params: JsonObject
    """Keyword arguments of ``Llama.create_chat_completion``."""


@dataclass(frozen=True, slots=True)
class Done:
    number: int
    completion: RawCompletion | None = None
    """What the model wrote and its token counts (``model`` left empty: the parent knows
    it), or ``None`` with ``error`` set."""
    error: str | None = None
    refused: bool = False
    """The request itself was wrong (e.g. longer than the context window): do not retry."""


def serve(
    conn: Connection,
    model_path: str,
    context_window: int,
    cancel: Synchronized[int],
    threads: int | None = None,
) -> None:
    """Load the model and answer jobs until told to stop or the parent goes away.

    ``threads`` ``None`` keeps llama-cpp's thread count (half the cores): on a machine
    whose cores are shared, one more thread than there is room for made generation 12×
    slower (85.8 s against 7.1 s for 40 tokens), since llama.cpp's threads spin at every
    step. For the same reason OpenMP's threads wait passively unless the environment says
    otherwise: two endpoints' model processes side by side on 2 cores (an application and
    its simulated user) took 12.4 s for what one alone did in 4.6 s while they spun, 2.4 s
    once they waited passively; one process alone spinning, 4.0 s
    (``benchmarks/bench_local_processes.py``).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # read when llama.cpp loads
    try:
        from llama_cpp import Llama  # the optional extra

        model = Llama(
            model_path=model_path,
            n_ctx=context_window,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
        # Judges' prompts share long prefixes (the guidelines, the scenario) but alternate
        # between targets; the model itself reuses only the previous prompt's prefix, the
        # cache also the prefixes of earlier ones.
        model.set_cache(prompt_cache(PROMPT_CACHE_BYTES))
    except Exception as exc:  # reported to the parent, whatever it is
        conn.send(Failed(f"{type(exc).__name__}: {exc}"))
        return
    conn.send(Ready(context_window=model.n_ctx()))
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            done = _generate(model, job, cancel)
        except ValueError as exc:  # llama-cpp's word for a prompt over the context window
            done = Done(job.number, error=str(exc), refused=True)
        except Exception as exc:  # one bad request must not end the worker
            done = Done(job.number, error=f"{type(exc).__name__}: {exc}")
        conn.send(done)


def prompt_cache(capacity_bytes: int) -> Any:
    """llama-cpp-python's RAM cache of evaluated prompts, held to ``capacity_bytes``.

    Each state the library keeps carries, besides the model's own state, a copy of the
    logits buffer (n_batch × vocabulary floats: 100 MB for SmolLM2's 49,152 tokens) that
    its capacity does not count: a worker with a 512 MB cache grew to 3.8 GB. No reply
    reads those old logits (a state taken from the cache evaluates at least one prompt
    token again before sampling), so only the last row is kept, and the capacity counts
    everything a state holds.
    """
    from llama_cpp import LlamaRAMCache, LlamaState

    class PromptCache(LlamaRAMCache):  # type: ignore[misc]
        @property
        def cache_size(self) -> int:
            return sum(_state_bytes(state) for state in self.cache_state.values())

        def __setitem__(self, key: Any, state: Any) -> None:
            # load_state broadcasts the one kept row over the rows it restores.
            trimmed = LlamaState(
                input_ids=state.input_ids,
                scores=state.scores[-_KEPT_LOGIT_ROWS:].copy(),
                n_tokens=state.n_tokens,
                llama_state=state.llama_state,
                llama_state_size=state.llama_state_size,
                seed=state.seed,
            )
            super().__setitem__(key, trimmed)

    return PromptCache(capacity_bytes=capacity_bytes)


def _state_bytes(state: Any) -> int:
    return int(state.llama_state_size + state.scores.nbytes + state.input_ids.nbytes)


def _generate(model: Any, job: Job, cancel: Synchronized[int]) -> Done:
    """Stream the reply token by token, so a cancelled job stops at the next token.

    Streamed replies carry no usage: each chunk is one generated token, and the model's
    context then holds the prompt and the reply. The prompt tokens taken from a kept
    prefix instead of evaluated are counted apart (``cached_prompt_tokens``).
    """
    evaluated_before = _prompt_tokens_evaluated(model)
    text: list[str] = []
    finish_reason = None
    for chunk in model.create_chat_completion(**job.params, stream=True):
        if cancel.value == job.number:
            return Done(job.number, error="cancelled")
        choice = chunk["choices"][0]
        piece = choice["delta"].get("content")
        if piece:
            text.append(piece)
        finish_reason = choice.get("finish_reason") or finish_reason
    completion_tokens = len(text)
    prompt_tokens = max(0, model.n_tokens - completion_tokens)
    evaluated_after = _prompt_tokens_evaluated(model)
    cached = None
    if evaluated_before is not None and evaluated_after is not None:
        cached = max(0, prompt_tokens - (evaluated_after - evaluated_before))
    return Done(
        job.number,
        completion=RawCompletion(
            text="".join(text),
            model="",
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=finish_reason,
            cached_prompt_tokens=cached,
        ),
    )


def _prompt_tokens_evaluated(model: Any) -> int | None:
    """llama.cpp's count of prompt tokens evaluated so far (``None`` if it keeps none)."""
    try:
        import llama_cpp

        return int(llama_cpp.llama_perf_context(model._ctx.ctx).n_p_eval)
    except Exception:  # an older or newer binding without the counter: no figure
        return None
