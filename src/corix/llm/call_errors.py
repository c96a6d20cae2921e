"""Failures of model calls: what a transport reports and what the client finally raises."""

from __future__ import annotations

import re

from corix.errors import CorixError

# 408 and 429 ask the caller to come back later; other 4xx mean the request itself is wrong.
_RETRYABLE_CLIENT_STATUSES = frozenset({408, 429})


def is_retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth another attempt: 408, 429 and every 5xx."""
    return status in _RETRYABLE_CLIENT_STATUSES or status >= 500


class TransportError(Exception):
    """One attempt failed. Transports raise it; the client decides whether to retry."""

    def __init__(
        self,
        reason: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.status = status
        self.retry_after_s = retry_after_s

    @classmethod
    def from_status(
        cls, status: int, detail: str, retry_after_s: float | None = None
    ) -> TransportError:
        return cls(
            f"HTTP {status}: {detail}" if detail else f"HTTP {status}",
            retryable=is_retryable_status(status) and not is_deterministic_refusal(detail),
            status=status,
            retry_after_s=retry_after_s,
        )


_DETERMINISTIC = re.compile(
    r"validation error|invalid request|invalid_request|not supported|unsupported|"
    r"context length|context window|maximum context|n_ctx|exceeds the context|too many tokens|"
    r"insufficient_quota|billing_hard_limit|exceeded your current quota",
    re.IGNORECASE,
)


def is_deterministic_refusal(detail: str) -> bool:
    """Whether an error body says the request itself is wrong (a validation error, an
    unsupported option, a prompt over the context window) or that the account cannot pay
    for it (OpenAI's 429 ``insufficient_quota``): the same request would fail the same way,
    so it is not retried, whatever the status (llama-cpp answers these 500)."""
    return _DETERMINISTIC.search(detail) is not None


class ModelCallError(CorixError):
    """A model call gave up: the failure was not retryable or the retries ran out."""

    def __init__(self, endpoint: str, reason: str, attempts: int, status: int | None) -> None:
        super().__init__(
            f"model call to endpoint '{endpoint}' failed after {attempts} attempt(s): {reason}"
        )
        self.endpoint = endpoint
        self.reason = reason
        self.attempts = attempts
        self.status = status
