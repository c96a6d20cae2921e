"""Applications opened by the server, and the live dialogue behind each human session.

Applications keep dialogue state that cannot be stored, so this process keeps each human
session's :class:`AppSession` as a cache: the database is the record. A dialogue is used
only if it has seen every stored turn; when it is missing (a restart, another server process
served the tester, the cache let it go) or behind (another process served the turns since),
the next turn starts a fresh dialogue and replays the stored turns into it where the
application takes its context that way (chat endpoints: the turn's ``meta`` says
``dialogue_resumed``); otherwise (an ARIA submission keeps its state on its side) the
dialogue restarts, the turn's ``meta`` says ``dialogue_restarted`` and the tester is shown
where. Routing a tester to the same process each time (sticky sessions) only saves replays.

Each reply has one total deadline, however the application spends it (connecting, retrying,
a body that dribbles in): past it the turn is stored as failed with the reason.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio

from corix.apps import Application, AppReply, AppSession, build_application
from corix.domain import JsonObject
from corix.scenarios import Toolbox
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


@dataclass
class _Live:
    dialogue: AppSession
    turns_seen: int
    """Stored turns this dialogue took part in (or was replayed): the next index it expects."""


class LiveApplications:
    """Opens each application once, on first use, with its server-side credentials.

    ``reply_deadline_s`` bounds each reply as a whole; at most ``max_live`` dialogues are
    kept, the least recently used let go first (they are replayed when used again).
    """

    def __init__(self, db: Database, *, reply_deadline_s: float, max_live: int = 5000) -> None:
        self._db = db
        self._deadline_s = reply_deadline_s
        self._max_live = max_live
        self._apps: dict[int, _Opened] = {}
        self._open_locks: dict[int, asyncio.Lock] = {}
        self._dialogues: OrderedDict[str, _Live] = OrderedDict()
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
        index: int,
        history: Callable[[], Sequence[tuple[str, str]]] | None,
        toolbox: Toolbox | None = None,
    ) -> Exchange:
        """Send one message, the session's turn ``index``; failures come back as an error
        reply (past the deadline too). ``toolbox``: the scenario pack's tools, given to an
        application that takes them when its dialogue opens (as the testing levels do).

        ``history`` loads the session's answered turns (user text, reply); ``None`` when the
        session has no turns yet. It is read only when the live dialogue is missing or behind.
        """
        started = time.perf_counter()
        outcome: tuple[AppReply, bool, bool]
        try:
            outcome = await asyncio.wait_for(
                self._respond(session_id, application_id, text, index, history, toolbox),
                self._deadline_s,
            )
        except TimeoutError:
            # The dialogue may be half-way through a reply: the next turn rebuilds it.
            await self._let_go(session_id)
            outcome = (AppReply(error=_late(self._deadline_s)), False, False)
        except Exception as exc:  # an adapter that raises instead of returning an error
            await self._let_go(session_id)
            outcome = (AppReply(error=f"{type(exc).__name__}: {exc}"), False, False)
        reply, restarted, resumed = outcome
        latency_ms = (time.perf_counter() - started) * 1000
        return Exchange(reply=reply, latency_ms=latency_ms, restarted=restarted, resumed=resumed)

    async def _respond(
        self,
        session_id: str,
        application_id: int,
        text: str,
        index: int,
        history: Callable[[], Sequence[tuple[str, str]]] | None,
        toolbox: Toolbox | None,
    ) -> tuple[AppReply, bool, bool]:
        restarted = resumed = False
        live = self._dialogues.get(session_id)
        if live is not None and live.turns_seen != index:
            await self._let_go(session_id)  # another process served the turns since
            live = None
        if live is None:
            opened = await self._opened(application_id)
            live = _Live(await opened.app.open_session(toolbox), turns_seen=0)
            if history is not None:
                earlier = await anyio.to_thread.run_sync(history)
                resumed = await live.dialogue.replay(earlier)
                restarted = not resumed
            self._keep(session_id, live)
        self._dialogues.move_to_end(session_id)
        reply = await live.dialogue.respond(text)
        live.turns_seen = index + 1
        return reply, restarted, resumed

    def _keep(self, session_id: str, live: _Live) -> None:
        self._dialogues[session_id] = live
        while len(self._dialogues) > self._max_live:
            _, oldest = self._dialogues.popitem(last=False)
            asyncio.get_running_loop().create_task(_end_quietly(oldest.dialogue))

    async def _let_go(self, session_id: str) -> None:
        live = self._dialogues.pop(session_id, None)
        if live is not None:
            await _end_quietly(live.dialogue)

    async def end(self, session_id: str) -> None:
        await self._let_go(session_id)

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

    def _load(self, application_id: int) -> tuple[str, JsonObject, JsonObject | None]:
        found = launch(self._db, application_id)
        if found is None:
            raise LookupError(f"no application {application_id}")
        return found.spec, found.options, found.auth


async def _end_quietly(dialogue: AppSession) -> None:
    try:
        await dialogue.end()
    except Exception as exc:
        log.warning("ending a dialogue failed: %s", exc)


def _late(deadline_s: float) -> str:
    return f"the application did not answer within {deadline_s:g} s"
