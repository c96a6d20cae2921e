"""What a run holds, owned in one place and let go of whatever happens.

A run holds its lease, opens applications, simulated users' clients, a pool of HTTP
connections and a reply cache, and must store its end. Closing one of them may fail (an
application's ``close()`` raising, a server gone); that must neither leave the others open
nor keep the run from storing its end: a finished run once stayed ``stale``, with a summary
of 0 sessions, because an application's ``close()`` raised, and every ``--resume`` failed
the same way.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable

__all__ = ["OwnedResources"]

logger = logging.getLogger(__name__)

Closer = Callable[[], Awaitable[None] | None]


class OwnedResources(contextlib.AsyncExitStack):
    """One exit stack for what a run holds, unwound in reverse order when the run ends.

    Components are registered with :meth:`add` as they open: a closer that fails is logged
    with its component's name and the rest still unwinds. What must not fail quietly (a
    lease's release, storing the run's end) goes on the stack as on any exit stack.
    """

    def __init__(self) -> None:
        super().__init__()
        self.failed: list[str] = []
        """Each close that failed, as ``component: reason``."""

    def add(self, component: str, close: Closer) -> None:
        self.push_async_callback(self._close, component, close)

    async def _close(self, component: str, close: Closer) -> None:
        try:
            closing = close()
            if inspect.isawaitable(closing):
                await closing
        except Exception as exc:  # any failure of a component's close
            reason = f"{component}: {type(exc).__name__}: {exc}"
            self.failed.append(reason)
            logger.warning("closing %s failed; the run is not affected", reason)
