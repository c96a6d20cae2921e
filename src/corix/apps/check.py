"""The application check: open, ask the version, start a session, send one prompt, close.

`corix app check` and the web testbed's registration run this same check, so an
application the command line rejects cannot be registered in the browser either.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from corix.apps.base import Application
from corix.apps.specs import build_application
from corix.domain import JsonObject

DEFAULT_PROMPT = "Hello! What can you help me with?"
DETAIL_CHARS = 1000
_UNDISPLAYABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
T = TypeVar("T")


@dataclass(frozen=True)
class CheckStep:
    name: str
    elapsed_ms: float
    detail: str = ""
    ok: bool = True


@dataclass(frozen=True)
class CheckReport:
    steps: list[CheckStep] = field(default_factory=list)

    @property
    def failure(self) -> CheckStep | None:
        """The first step that failed, or None when the application passed."""
        return next((step for step in self.steps if not step.ok), None)

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def reason(self) -> str:
        """Why the check failed, in one line; empty when it passed."""
        failed = self.failure
        return "" if failed is None else f"{failed.name} failed: {failed.detail}"


class _StepFailed(Exception):
    pass


class _Steps:
    """Times each step and turns any exception into a failed step: the code is untrusted."""

    def __init__(self) -> None:
        self.done: list[CheckStep] = []

    async def run(
        self, name: str, call: Awaitable[T], describe: Callable[[T], object] | None = None
    ) -> T:
        started = time.perf_counter()
        try:
            result = await call
        except Exception as exc:  # an application may raise anything; report it, go on
            self._add(name, started, f"{type(exc).__name__}: {exc}", ok=False)
            raise _StepFailed from None
        detail = "" if describe is None else str(describe(result))
        self._add(name, started, detail, ok=True)
        return result

    def _add(self, name: str, started: float, detail: str, *, ok: bool) -> None:
        elapsed_ms = (time.perf_counter() - started) * 1000
        self.done.append(CheckStep(name, elapsed_ms, displayable(detail), ok))


def displayable(text: str) -> str:
    """``text`` fit to show on a terminal or a page: control characters (terminal escape
    sequences included), NUL and lone surrogates replaced by U+FFFD, at most
    ``DETAIL_CHARS`` characters. What an application says is untrusted."""
    shown = _UNDISPLAYABLE.sub("\ufffd", text)
    return shown if len(shown) <= DETAIL_CHARS else shown[: DETAIL_CHARS - 1] + "…"


async def check_application(
    spec: str,
    auth: JsonObject | None = None,
    prompt: str = DEFAULT_PROMPT,
    *,
    options: Mapping[str, Any] | None = None,
) -> CheckReport:
    """Run the check; a step that raises or a reply with an error fails it with the reason.

    An unknown adapter or a malformed spec is the caller's input error and is raised.
    """
    application: Application = build_application(spec, options)
    steps = _Steps()
    try:
        await steps.run("open", application.open(auth))
        await steps.run("version", application.version(), describe=str)
        session = await steps.run("start session", application.start_session())
        reply = await steps.run("respond", session.respond(prompt), describe=lambda r: r.text)
        if not reply.ok:
            last = steps.done[-1]
            error = displayable(str(reply.error))
            steps.done[-1] = CheckStep(last.name, last.elapsed_ms, error, ok=False)
        await steps.run("end session", session.end())
    except _StepFailed:
        pass
    finally:
        with contextlib.suppress(_StepFailed):
            await steps.run("close", application.close())
    return CheckReport(steps.done)


__all__ = ["DEFAULT_PROMPT", "CheckReport", "CheckStep", "check_application", "displayable"]
