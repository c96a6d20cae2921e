"""Adapter for ARIA dialog API submissions (``aria:PATH``).

A submission is a directory with ``aria_dialog_api_team.py`` defining ``Team_ARIADialogAPI``.
Its calls are synchronous and its instance holds the dialogue state, so every session gets
its own instance and every call runs in a worker thread, bounded by a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from corix.apps import aria_base
from corix.apps.base import Application, ApplicationError, AppReply, AppSession
from corix.apps.options import checked_options
from corix.apps.specs import AdapterSpec
from corix.config import json_object_from_env
from corix.domain import JsonObject
from corix.errors import CorixError
from corix.llm import raise_if_cancelling

TEAM_MODULE = "aria_dialog_api_team.py"
TEAM_CLASS = "Team_ARIADialogAPI"
BASE_MODULE = "aria_dialog_api_base"
AUTH_ENV = "ARIA_AUTH_JSON"

# sys.path and sys.modules are process-wide: two submissions must never import at once.
_IMPORT_LOCK = threading.Lock()
T = TypeVar("T")


def _local_module_names(directory: Path) -> set[str]:
    names = {p.stem for p in directory.glob("*.py")}
    names |= {p.name for p in directory.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    return names


def _belongs_to(module: ModuleType, directory: Path) -> bool:
    origin = getattr(module, "__file__", None)
    return origin is not None and Path(origin).resolve().is_relative_to(directory)


def load_submission_class(directory: Path) -> type[Any]:
    """Import a submission's team class so that its sibling modules stay private to it.

    The directory is put first on ``sys.path`` while the team module executes; afterwards
    every module imported from the directory is removed from ``sys.modules`` (the team
    module keeps its references) and shadowed modules are restored, so a second submission
    with its own ``utils.py`` gets its own.
    """
    directory = directory.resolve()
    team_file = directory / TEAM_MODULE
    if not team_file.is_file():
        raise CorixError(f"{directory} is not an ARIA submission: {TEAM_MODULE} is missing")
    digest = hashlib.sha256(str(directory).encode()).hexdigest()[:12]
    with _IMPORT_LOCK:
        saved_modules = dict(sys.modules)
        saved_path = list(sys.path)
        for name in _local_module_names(directory) | {BASE_MODULE}:
            sys.modules.pop(name, None)
        if not (directory / f"{BASE_MODULE}.py").exists():
            sys.modules[BASE_MODULE] = aria_base
        sys.path.insert(0, str(directory))
        try:
            spec = importlib.util.spec_from_file_location(f"_corix_aria_{digest}", team_file)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except Exception as exc:
            raise CorixError(f"cannot import {team_file}: {type(exc).__name__}: {exc}") from exc
        finally:
            sys.path[:] = saved_path
            for name, loaded in list(sys.modules.items()):
                if name not in saved_modules and (
                    name == BASE_MODULE or _belongs_to(loaded, directory)
                ):
                    del sys.modules[name]
            for name, original in saved_modules.items():
                if sys.modules.get(name) is not original:
                    sys.modules[name] = original
    team_class = getattr(module, TEAM_CLASS, None)
    if not isinstance(team_class, type):
        raise CorixError(f"{team_file} does not define class {TEAM_CLASS}")
    return team_class


class _Worker:
    """Runs a submission's synchronous calls off the event loop, each with a deadline."""

    def __init__(self, pool: ThreadPoolExecutor, timeout_s: float) -> None:
        self.pool = pool
        self.timeout_s = timeout_s

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await asyncio.wait_for(loop.run_in_executor(self.pool, fn, *args), self.timeout_s)


def held_items(instance: Any) -> int:
    """How many items the containers among ``instance``'s attributes hold (a history kept
    on the instance shows here; text and numbers do not count)."""
    try:
        attributes = vars(instance)
    except TypeError:  # no __dict__: nothing we can look at
        return 0
    return sum(
        len(value)
        for value in attributes.values()
        if isinstance(value, list | dict | set | tuple | deque)
    )


class _Instances:
    """Which submission instances sessions hold, to catch an instance shared between them.

    A submission should make a fresh instance per session. One that hands out the same
    instance (a singleton) mixes dialogues: at once, when two open sessions hold it; later,
    when a history that grew during an earlier session is still there as a new one starts.
    """

    def __init__(self) -> None:
        self._open: dict[int, int] = {}
        """id of an instance open sessions hold → the items it held as its session began."""
        self._history: dict[int, tuple[Any, int]] = {}
        """id → (instance, items it held at the end of a session during which they grew);
        the instance is kept so that its id is not reused by another object."""

    def claim(self, instance: Any) -> None:
        key = id(instance)
        if key in self._open:
            raise ApplicationError(
                "shared state: the submission gave this session the instance another open "
                f"session is using, so their dialogues would mix{SHARED_STATE_HINT}"
            )
        now = held_items(instance)
        earlier = self._history.get(key)
        if earlier is not None and now >= earlier[1]:
            raise ApplicationError(
                "shared state: the submission gave this session the instance an earlier "
                f"session used, still holding the history it grew ({now} items); make a "
                "fresh instance per session"
            )
        self._open[key] = now

    def release(self, instance: Any) -> None:
        key = id(instance)
        began = self._open.pop(key, 0)
        ended = held_items(instance)
        if ended > began:
            self._history[key] = (instance, ended)


class AriaSession(AppSession):
    def __init__(
        self,
        instance: Any,
        worker: _Worker,
        *,
        shared: bool = False,
        on_end: Callable[[Any], None] | None = None,
    ) -> None:
        self._instance = instance
        self._worker = worker
        self._abandoned: str | None = None
        self._hint = SHARED_STATE_HINT if shared else ""
        self._on_end = on_end

    async def respond(self, text: str) -> AppReply:
        if self._abandoned:
            return AppReply(error=self._abandoned)
        try:
            result = await self._worker.call(self._instance.GetResponse, text)
        except TimeoutError:
            raise_if_cancelling()  # a stop is not the submission's error
            # The thread may still be stuck inside the submission: never reuse this instance.
            self._abandoned = (
                f"session abandoned: an earlier GetResponse hung past {self._worker.timeout_s:g}s"
            )
            return AppReply(error=f"GetResponse timed out after {self._worker.timeout_s:g}s")
        except Exception as exc:
            raise_if_cancelling()
            return AppReply(error=f"GetResponse raised {type(exc).__name__}: {exc}{self._hint}")
        reply = _parse_response(result)
        if reply.error is not None and self._hint:
            return reply.model_copy(update={"error": reply.error + self._hint})
        return reply

    async def end(self) -> None:
        if self._abandoned:
            return
        # Closing is best effort: the dialogue is already stored.
        with contextlib.suppress(Exception):
            await self._worker.call(self._instance.CloseConnection)
        if self._on_end is not None:
            self._on_end(self._instance)


def _parse_response(result: Any) -> AppReply:
    if not isinstance(result, Mapping):
        return AppReply(error=f"GetResponse returned {type(result).__name__}, expected a dict")
    success, response = result.get("success"), result.get("response")
    if success is not True:
        detail = f": {response}" if isinstance(response, str) and response else ""
        return AppReply(error=f"GetResponse reported success={success!r}{detail}")
    if not isinstance(response, str):
        return AppReply(error=f"GetResponse 'response' is {type(response).__name__}, not text")
    return AppReply(text=response)


SHARED_STATE_HINT = (
    " (sessions of this submission ran at the same time and may share state; "
    "run it with sessions=1, the default)"
)


class AriaSubmission(Application):
    """A submission to ARIA's dialog API. Its instances may keep the dialogue in shared
    module state, so its sessions run one at a time unless the spec declares more
    (``aria:DIR?sessions=8``) — a wrong declaration shows as errors that say so. An
    instance handed to two open sessions, or handed to a new session still holding an
    earlier one's history, fails that session's start (shared state), whatever ``sessions``
    says."""

    def __init__(
        self, directory: Path, *, timeout_s: float = 60.0, threads: int = 64, sessions: int = 1
    ) -> None:
        if sessions < 1:
            raise ValueError(f"sessions must be at least 1, got {sessions}")
        self.concurrent_sessions = sessions
        self._shared = sessions > 1
        self.directory = directory
        self._team_class = load_submission_class(directory)
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="aria")
        self._worker = _Worker(self._pool, timeout_s)
        self._auth: JsonObject | None = None
        self._instances = _Instances()

    async def open(self, auth: Mapping[str, Any] | None = None) -> None:
        self._auth = dict(auth) if auth is not None else json_object_from_env(AUTH_ENV)

    async def version(self) -> str:
        try:
            return str(await self._worker.call(self._team_class.GetVersion))
        except Exception as exc:
            return f"unknown ({type(exc).__name__})"

    async def start_session(self) -> AppSession:
        try:
            instance = await self._worker.call(self._team_class)
            if await self._worker.call(instance.OpenConnection, self._auth) is False:
                raise ApplicationError("OpenConnection returned False")
            if await self._worker.call(instance.StartSession) is False:
                raise ApplicationError("StartSession returned False")
            self._instances.claim(instance)
        except ApplicationError:
            raise
        except TimeoutError:
            raise_if_cancelling()
            raise ApplicationError(
                f"starting a session timed out after {self._worker.timeout_s:g}s"
            ) from None
        except Exception as exc:
            raise_if_cancelling()
            raise ApplicationError(
                f"starting a session raised {type(exc).__name__}: {exc}"
            ) from exc
        return AriaSession(
            instance, self._worker, shared=self._shared, on_end=self._instances.release
        )

    async def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def aria_adapter(spec: AdapterSpec) -> Application:
    options = checked_options(spec, ("timeout_s", "threads", "sessions"), {"timeout": "timeout_s"})
    return AriaSubmission(
        Path(spec.target),
        timeout_s=float(options.get("timeout_s", 60)),
        threads=int(options.get("threads", 64)),
        sessions=int(options.get("sessions", 1)),
    )
