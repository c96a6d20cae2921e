"""How long to wait before retrying a failed attempt."""

from __future__ import annotations

import random

# 2**32 times any sensible base already exceeds any sensible cap; avoids float overflow.
_MAX_EXPONENT = 32


def retry_delay(
    failures: int,
    *,
    base_s: float,
    max_s: float,
    retry_after_s: float | None,
    rng: random.Random,
) -> float:
    """Capped exponential backoff with "equal jitter", never shorter than ``Retry-After``.

    ``failures`` counts the failed attempts so far (1 after the first). The delay lies
    in ``[c/2, c]`` for ``c = min(max_s, base_s * 2**(failures-1))``: the jitter spreads
    out clients that failed together, the floor keeps each of them backing off. A
    server's ``Retry-After`` is honoured even beyond ``max_s``.
    """
    ceiling = min(max_s, base_s * 2.0 ** min(failures - 1, _MAX_EXPONENT))
    delay = ceiling / 2 + rng.uniform(0, ceiling / 2)
    if retry_after_s is not None:
        delay = max(delay, retry_after_s)
    return delay
