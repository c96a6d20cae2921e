"""Applications for tests, importable as ``python:support.apps:NAME`` with tests/ on the path."""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from collections.abc import Mapping
from typing import Any

from corix.apps.base import Application, ApplicationError, AppReply, AppSession


class _EchoSession(AppSession):
    def __init__(self, delay_s: float, fail_on: str | None) -> None:
        self.delay_s = delay_s
        self.fail_on = fail_on
        self.turns = 0

    async def respond(self, text: str) -> AppReply:
        self.turns += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.fail_on and self.fail_on in text.lower():
            raise RuntimeError(f"cannot handle '{self.fail_on}'")
        return AppReply(text=f"echo {self.turns}: {text}")


class EchoApp(Application):
    """Echoes the user; optionally slow, optionally raising on a keyword."""

    def __init__(self, delay_ms: str | float = 0, fail_on: str | None = None) -> None:
        self.delay_s = float(delay_ms) / 1000
        self.fail_on = fail_on

    async def open(self, auth: Mapping[str, Any] | None = None) -> None:
        return None

    async def version(self) -> str:
        return "echo 1"

    async def start_session(self) -> AppSession:
        return _EchoSession(self.delay_s, self.fail_on)


class DiesWhileStartingApp(EchoApp):
    """Echoes; the first process other than ``driver_pid`` to open it dies there and then,
    as a Ray worker killed while it starts does (out of memory, its node lost). The file
    ``marker``, made by the one that dies, tells the others it happened."""

    def __init__(self, driver_pid: str | int, marker: str, delay_ms: str | float = 0) -> None:
        super().__init__(delay_ms=delay_ms)
        self.driver_pid = int(driver_pid)
        self.marker = marker

    async def open(self, auth: Mapping[str, Any] | None = None) -> None:
        if os.getpid() == self.driver_pid:
            return
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        os._exit(1)


class RefusingApp(EchoApp):
    """Passes preflight but refuses to open, as a server rejecting credentials does."""

    async def open(self, auth: Mapping[str, Any] | None = None) -> None:
        raise ApplicationError("credentials rejected")


class _HostileSession(AppSession):
    async def respond(self, text: str) -> AppReply:
        return AppReply(text="a NUL \x00, a lone \ud800 and a terminal escape \x1b[2J end")


class HostileApp(EchoApp):
    """Answers with bytes no terminal, page or database should take as they are."""

    async def version(self) -> str:
        return "v\x00\ud800" + "9" * 300

    async def start_session(self) -> AppSession:
        return _HostileSession()


class GreetingApp(EchoApp):
    """Needs one option and takes any other: it checks its own."""

    def __init__(self, greeting: str, **extra: str) -> None:
        super().__init__()
        self.greeting = greeting
        self.extra = extra


class FailingCloseApp(EchoApp):
    """Answers like EchoApp, then raises when closed (a client library's bug at shutdown)."""

    async def close(self) -> None:
        raise RuntimeError("connection reset while closing")


SESSIONS_STARTED: Counter[str] = Counter()
"""Sessions each ``SignallingApp`` (by its ``name``) started in this process, across runs."""


class SignallingApp(EchoApp):
    """Echoes, and sends its own process SIGTERM as the ``at``-th session of all those its
    ``name`` started in this process begins: an operator's ``kill`` at a known moment (a
    resume in the same process goes on past it). SIGINT as the ``interrupt_at``-th begins
    (0: never): a terminal's Ctrl-C, which reaches a shell's background jobs too."""

    def __init__(
        self,
        at: str | int,
        name: str,
        delay_ms: str | float = 0,
        interrupt_at: str | int = 0,
    ) -> None:
        super().__init__(delay_ms=delay_ms)
        self.at = int(at)
        self.interrupt_at = int(interrupt_at)
        self.name = name

    async def start_session(self) -> AppSession:
        SESSIONS_STARTED[self.name] += 1
        if SESSIONS_STARTED[self.name] == self.interrupt_at:
            os.kill(os.getpid(), signal.SIGINT)
        if SESSIONS_STARTED[self.name] == self.at:
            os.kill(os.getpid(), signal.SIGTERM)
        return await super().start_session()
