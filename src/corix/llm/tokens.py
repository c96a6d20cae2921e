"""Token estimates for rate limiting and for replies whose server reports no usage.

Real tokenizers are model-specific and costly; the rate limiter only needs a bound that
the real usage later corrects, so the common rule of thumb (~4 characters per token)
is enough.
"""

from __future__ import annotations

from collections.abc import Sequence

from corix.llm.models import ChatMessage, ChatRequest

CHARS_PER_TOKEN = 4
# Chat formats wrap every message in a few role/separator tokens.
TOKENS_PER_MESSAGE = 4
# Completion budget assumed when a request sets no max_tokens.
DEFAULT_COMPLETION_ESTIMATE = 256
# Share of a declared context window kept free when fitting prompts, because the counts
# here are estimates: a real tokenizer may need a fifth more tokens than they say.
CONTEXT_SAFETY_SHARE = 0.2


def usable_context(context_window: int) -> int:
    """The tokens of a declared window a fitted prompt and its reply may use."""
    return int(context_window * (1 - CONTEXT_SAFETY_SHARE))


def estimate_tokens(text: str) -> int:
    """Rough token count of a text (at least 1 for a non-empty text)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_prompt_tokens(request: ChatRequest) -> int:
    return estimate_messages_tokens(request.messages)


def estimate_messages_tokens(messages: Sequence[ChatMessage]) -> int:
    return sum(TOKENS_PER_MESSAGE + estimate_tokens(m.content) for m in messages)


def estimate_request_tokens(request: ChatRequest) -> int:
    """Prompt plus the most the completion may use: what a call can cost a token quota."""
    completion = request.max_tokens or DEFAULT_COMPLETION_ESTIMATE
    return estimate_prompt_tokens(request) + completion
