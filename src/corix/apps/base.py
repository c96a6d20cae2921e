"""The application-under-test interface: a black box that answers a user's text in a session."""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from corix.domain import Message, TurnRecord
from corix.llm import UsageSnapshot
from corix.scenarios import Toolbox


class AppReply(BaseModel):
    """What an application said, or why it could not say anything."""

    text: str | None = None
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    """Why the model stopped, when the application says (``length``: cut at max tokens)."""
    messages: tuple[Message, ...] = ()
    """What the application did after the user's message, when it reports more than a
    text: its tool calls, the tools' results and its answer, in order (empty: ``text``
    is all of it)."""

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None

    def turn(self, index: int, user_text: str, **fields: Any) -> TurnRecord:
        """The turn this reply answers ``user_text`` with; ``fields`` are the turn's other
        fields (latency, meta, creation time). Every writer of an application's turn
        (the testing levels, the web) builds it here, so tool calls are never dropped."""
        common = {
            "error": self.error,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            **fields,
        }
        response_text = self.text if self.error is None else None
        if not self.messages:
            return TurnRecord(
                index=index, user_text=user_text, response_text=response_text, **common
            )
        steps = (Message.user(user_text), *self.messages)
        return TurnRecord.from_messages(index, steps, response_text=response_text, **common)


class AppSession(ABC):
    """One dialogue with an application. Holds whatever state the application keeps."""

    @abstractmethod
    async def respond(self, text: str) -> AppReply:
        """Answer one user message. Failures are returned as ``AppReply(error=...)``."""

    async def replay(self, history: Sequence[tuple[str, str]]) -> bool:
        """Give a fresh dialogue its earlier turns (user text, reply) without sending them.

        Returns whether this application takes its context that way: chat endpoints resend
        the history with every request and can; applications whose dialogue state lives on
        their side (an ARIA submission) cannot, and keep the default ``False``.
        """
        return False

    async def use_tools(self, toolbox: Toolbox) -> bool:
        """Take the scenario pack's tools for this dialogue: the application may call them,
        and corix answers each call from the pack (:class:`~corix.scenarios.Toolbox`).

        Returns whether this application takes them; most keep the default ``False``.
        """
        return False

    async def end(self) -> None:  # noqa: B027 - most applications keep nothing to release
        """Release the session's resources."""


class Application(ABC):
    """An application under test, opened once per run and asked for many sessions.

    ``concurrent_sessions`` bounds the sessions open at once (``None``: as many as the
    plan's concurrency allows). An application whose sessions may share state — an ARIA
    submission whose instances share a module-level dialogue — declares 1, and its
    sessions take turns through :meth:`session_slot`.
    """

    concurrent_sessions: int | None = None
    _session_gate: asyncio.Semaphore | None = None

    @contextlib.asynccontextmanager
    async def session_slot(self) -> AsyncIterator[None]:
        """Hold for a whole session, from ``start_session`` to ``end``."""
        if self.concurrent_sessions is None:
            yield
            return
        if self._session_gate is None:
            self._session_gate = asyncio.Semaphore(self.concurrent_sessions)
        async with self._session_gate:
            yield

    @abstractmethod
    async def open(self, auth: Mapping[str, str] | None = None) -> None:
        """Connect, with credentials if the application needs them."""

    @abstractmethod
    async def version(self) -> str:
        """The application's self-reported version, stored as provenance."""

    @abstractmethod
    async def start_session(self) -> AppSession:
        """Begin a dialogue; concurrent sessions must not share state."""

    async def open_session(self, toolbox: Toolbox | None = None) -> AppSession:
        """A new dialogue, given ``toolbox`` (the scenario pack's tools, if it has any) when
        the application takes tools."""
        session = await self.start_session()
        if toolbox is not None:
            await session.use_tools(toolbox)
        return session

    async def close(self) -> None:  # noqa: B027 - nothing to release by default
        """Disconnect."""

    def declared_system_prompt(self) -> str | None:
        """The application's system prompt, if it declares one; stored with every session.

        Guideline-leakage checks compare replies with it; annotators never see it.
        """
        return None

    def usage(self) -> UsageSnapshot | None:
        """Model-call accounting, for applications reached through corix's client layer."""
        return None


class ApplicationError(Exception):
    """An application could not open or start a session; recorded, never fatal to a run."""
