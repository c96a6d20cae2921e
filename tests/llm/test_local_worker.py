"""The local model's worker without llama.cpp: what it sends back for a generated reply."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from corix.llm import ChatMessage, ChatRequest
from corix.llm.local_transport import _raw_completion
from corix.llm.local_worker import Done, Job, _generate


class _FakeLlama:
    """Streams fixed pieces as llama-cpp-python does; its context then holds prompt + reply."""

    def __init__(self, pieces: list[str], n_tokens: int) -> None:
        self._pieces = pieces
        self.n_tokens = n_tokens
        self.params: dict[str, object] = {}

    def create_chat_completion(self, **params: Any) -> Iterator[dict[str, Any]]:
        self.params = params
        for piece in self._pieces:
            yield {"choices": [{"delta": {"content": piece}, "finish_reason": None}]}
        yield {"choices": [{"delta": {}, "finish_reason": "length"}]}


def test_a_generated_reply_comes_back_as_a_completion_that_crosses_the_pipe() -> None:
    model = _FakeLlama(["Hel", "", "lo"], n_tokens=20)
    done = _generate(model, Job(7, {"max_tokens": 5}), SimpleNamespace(value=0))  # type: ignore[arg-type]
    assert model.params == {"max_tokens": 5, "stream": True}
    done = pickle.loads(pickle.dumps(done))  # what the pipe does
    assert isinstance(done, Done) and done.number == 7 and done.completion is not None
    request = ChatRequest(model="smol", messages=[ChatMessage(role="user", content="Hi")])
    completion = _raw_completion(done.completion, request)
    assert completion.text == "Hello"
    assert completion.model == "smol"
    assert (completion.prompt_tokens, completion.completion_tokens) == (18, 2)
    assert completion.finish_reason == "length"
    assert completion.cached_prompt_tokens is None  # no llama.cpp counter to read


def test_a_cancelled_job_sends_no_completion() -> None:
    model = _FakeLlama(["a", "b"], n_tokens=4)
    done = _generate(model, Job(3, {}), SimpleNamespace(value=3))  # type: ignore[arg-type]
    assert done.completion is None and done.error == "cancelled"
