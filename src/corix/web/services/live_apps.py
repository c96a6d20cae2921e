"""Applications opened by the server, and the live dialogue behind each human session.

Applications keep dialogue state that cannot be stored, so each human session's
:class:`AppSession` lives in this process for as long as the session runs. A browser refresh
finds it again. After a server restart the next turn starts a fresh dialogue and replays the
stored turns into it where the application takes its context that way (chat endpoints:
the turn's ``meta`` says ``dialogue_resumed``); otherwise (an ARIA submission keeps its
state on its side) the dialogue restarts, the turn's ``meta`` says ``dialogue_restarted``
and the tester is shown where.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from corix.apps import Application, AppReply, AppSession, build_application
from corix.storage import Database
from corix.storage.web.applications import launch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Exchange:
    reply: AppReply
    latency_ms: float
    restarted: bool
    """The dialogue was lost (server restart) and started afresh without its context."""
    resumed: bool = False
    """The dialogue was lost and rebuilt from the stored turns."""


@dataclass
class _Opened:
    app: Application
    version: str | None


class LiveApplications:
    """Opens each application once, on first use, with its server-side credentials."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._apps: dict[int, _Opened] = {}
        self._open_locks: dict[int, asyncio.Lock] = {}
        self._dialogues: dict[str, AppSession] = {}
        self._session_locks: dict[str, asyncio.Lock] = {}

    def session_lock(self, key: str) -> asyncio.Lock:
        """A lock per human session, to take its turns one at a time."""
        return self._session_locks.setdefault(key, asyncio.Lock())

    def drop_lock(self, key: str) -> None:
        """Forget a finished session's lock (a later request would make a fresh one)."""
        self._session_locks.pop(key, None)

    async def version(self, application_id: int) -> str | None:
        """The application's version for provenance; ``None`` if it cannot be opened now."""
        try:
            return (await self._opened(application_id)).version
        except Exception as exc:  # any adapter failure: the session starts, its turns say why
            log.warning("application %s could not be opened: %s", application_id, exc)
            return None

    async def exchange(
        self,
        session_id: str,
        application_id: int,
        text: str,
        *,
        history: Callable[[], Sequence[tuple[str, str]]] | None,
    ) -> Exchange:
        """Send one message in the session's dialogue; failures come back as an error reply.

        ``history`` loads the session's answered turns (user text, reply); ``None`` when the
        session has no turns yet. It is read only when the live dialogue was lost.
        """
        started = time.perf_counter()
        restarted = resumed = False
        try:
            dialogue = self._dialogues.get(session_id)
            if dialogue is None:
                opened = await self._opened(application_id)
                dialogue = await opened.app.start_session()
                self._dialogues[session_id] = dialogue
                if history is not None:
                    earlier = await anyio.to_thread.run_sync(history)
                    resumed = await dialogue.replay(earlier)
                    restarted = not resumed
            reply = await dialogue.respond(text)
        except Exception as exc:  # an adapter that raises instead of returning an error
            reply = AppReply(error=f"{type(exc).__name__}: {exc}")
        latency_ms = (time.perf_counter() - started) * 1000
        return Exchange(reply=reply, latency_ms=latency_ms, restarted=restarted, resumed=resumed)

    async def end(self, session_id: str) -> None:
        dialogue = self._dialogues.pop(session_id, None)
        if dialogue is not None:
            try:
                await dialogue.end()
            except Exception as exc:
                log.warning("ending a dialogue failed: %s", exc)

    async def close(self) -> None:
        for session_id in list(self._dialogues):
            await self.end(session_id)
        for opened in self._apps.values():
            try:
                await opened.app.close()
            except Exception as exc:
                log.warning("closing an application failed: %s", exc)
        self._apps.clear()

    async def _opened(self, application_id: int) -> _Opened:
        opened = self._apps.get(application_id)
        if opened is not None:
            return opened
        async with self._open_locks.setdefault(application_id, asyncio.Lock()):
            opened = self._apps.get(application_id)
            if opened is None:
                spec, options, auth = await anyio.to_thread.run_sync(self._load, application_id)
                app = build_application(spec, options)
                await app.open(auth)
                opened = _Opened(app=app, version=await app.version())
                self._apps[application_id] = opened
            return opened

    def _load(self, application_id: int) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
        found = launch(self._db, application_id)
        if found is None:
            raise LookupError(f"no application {application_id}")
        return found.spec, found.options, found.auth
