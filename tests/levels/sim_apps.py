"""Applications for the simulated-user tests, importable as ``python:sim_apps:NAME``.

``RecordingApp`` wraps a demo application and keeps every message it receives, per
session, in ``RECEIVED[log]``, so tests can assert on exactly what the application saw;
``delay_ms`` makes each reply wait, as a real application's would.
``FlakyApp`` fails the turns it is told to, or refuses to start sessions at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from corix.apps.base import Application, ApplicationError, AppReply, AppSession
from corix.apps.demo import DemoApplication, DemoSession

RECEIVED: dict[str, list[list[str]]] = {}


class _RecordingSession(AppSession):
    def __init__(self, inner: DemoSession, log: list[str], delay_s: float) -> None:
        self._inner = inner
        self._log = log
        self._delay_s = delay_s

    async def respond(self, text: str) -> AppReply:
        self._log.append(text)
        await asyncio.sleep(self._delay_s)
        return await self._inner.respond(text)


class RecordingApp(Application):
    def __init__(self, log: str, variant: str = "guarded", delay_ms: str = "0") -> None:
        self._demo = DemoApplication(variant)
        self._sessions = RECEIVED.setdefault(log, [])
        self._delay_s = float(delay_ms) / 1000

    async def open(self, auth: Mapping[str, Any] | None = None) -> None:
        return None

    async def version(self) -> str:
        return "recording 1"

    async def start_session(self) -> AppSession:
        log: list[str] = []
        self._sessions.append(log)
        return _RecordingSession(await self._demo.start_session(), log, self._delay_s)


class _FlakySession(AppSession):
    def __init__(self, inner: DemoSession, failing: set[int]) -> None:
        self._inner = inner
        self._failing = failing
        self._turn = 0

    async def respond(self, text: str) -> AppReply:
        turn, self._turn = self._turn, self._turn + 1
        if turn in self._failing:
            raise RuntimeError(f"backend down at turn {turn}")
        return await self._inner.respond(text)


class FlakyApp(Application):
    """``fail_turns``: comma-separated turn indexes that raise; ``no_sessions``: refuse all."""

    def __init__(self, fail_turns: str = "", no_sessions: str = "") -> None:
        self._demo = DemoApplication("unguarded")
        self._failing = {int(t) for t in fail_turns.split(",") if t}
        self._no_sessions = bool(no_sessions)

    async def open(self, auth: Mapping[str, Any] | None = None) -> None:
        return None

    async def version(self) -> str:
        return "flaky 1"

    async def start_session(self) -> AppSession:
        if self._no_sessions:
            raise ApplicationError("no capacity for new sessions")
        return _FlakySession(await self._demo.start_session(), self._failing)
