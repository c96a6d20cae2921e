"""What a run opened, owned in one place and closed whatever happens.

A run opens applications, simulated users' clients, a pool of HTTP connections and a reply
cache. Closing one of them may fail (an application's ``close()`` raising, a server gone);
that must neither leave the others open nor keep the run from storing its end: a finished
run once stayed ``stale``, with a summary of 0 sessions, because an application's
``close()`` raised, and every ``--resume`` failed the same way.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable

__all__ = ["OwnedResources"]

logger = logging.getLogger(__name__)

Closer = Callable[[], Awaitable[None] | None]


class OwnedResources:
    """Closers registered as things open, run in reverse order by :meth:`aclose`; a closer
    that fails is logged with its component's name and the others still run."""

    def __init__(self) -> None:
        self._closers: list[tuple[str, Closer]] = []
        self.failed: list[str] = []
        """Each close that failed, as ``component: reason``."""

    def add(self, component: str, close: Closer) -> None:
        self._closers.append((component, close))

    async def aclose(self) -> None:
        closers, self._closers = self._closers, []
        for component, close in reversed(closers):
            try:
                closing = close()
                if inspect.isawaitable(closing):
                    await closing
            except Exception as exc:  # any failure of a component's close
                reason = f"{component}: {type(exc).__name__}: {exc}"
                self.failed.append(reason)
                logger.warning("closing %s failed; the run is not affected", reason)
