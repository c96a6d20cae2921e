"""Stopping a run's work cleanly: on SIGINT/SIGTERM, at its deadline, or when cancelled.

The work is cancelled, not killed: sessions in flight are left half-done (``--resume``
redoes them whole), and everything already handed to the writer is still committed.

A process started with SIGINT ignored (a background job of a shell without job control,
``nohup … &``) keeps ignoring it, and SIGTERM still stops it so: ``asyncio.run`` cancels
its main task on Ctrl-C only when SIGINT has Python's default handler, so
:func:`run_stoppable` cancels it on SIGTERM itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine
from types import FrameType
from typing import Any, TypeVar

from corix.execution.run_status import RunStatus

__all__ = ["STOP_SIGNALS", "RunStopper", "run_stoppable"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

T = TypeVar("T")


def run_stoppable(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where SIGTERM cancels ``main`` as a Ctrl-C does whatever
    SIGINT's disposition: ``main`` cleans up, then ``KeyboardInterrupt`` is raised (a
    second SIGTERM raises it at once)."""
    stop = _SigtermStop()
    with asyncio.Runner() as runner:
        try:
            return runner.run(stop.watching(main))
        except asyncio.CancelledError:
            if not stop.received:
                raise
            raise KeyboardInterrupt from None


class _SigtermStop:
    def __init__(self) -> None:
        self.received = False

    async def watching(self, main: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is not threading.main_thread():
            return await main  # signals are the main thread's
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()

        def cancel(_signum: int, _frame: FrameType | None) -> None:
            if self.received or task is None or task.done():
                raise KeyboardInterrupt
            self.received = True
            task.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wakes a select() waiting long

        previous = signal.signal(signal.SIGTERM, cancel)
        try:
            return await main
        finally:
            if previous is not None:  # None: set outside Python, and not ours to put back
                signal.signal(signal.SIGTERM, previous)


class RunStopper:
    """Runs one awaitable and cancels it when asked to stop; ``reason`` says why it stopped.

    ``is_cancelled`` is polled every ``poll_s`` seconds in a worker thread (it reads the
    database); signal handlers are installed only on the main thread, where they work.
    """

    def __init__(
        self,
        is_cancelled: Callable[[], bool],
        *,
        handle_signals: bool = False,
        poll_s: float = 1.0,
        deadline_s: float | None = None,
    ) -> None:
        self._is_cancelled = is_cancelled
        self._handle_signals = (
            handle_signals and threading.current_thread() is threading.main_thread()
        )
        self._poll_s = poll_s
        self._deadline_s = deadline_s
        self._task: asyncio.Future[None] | None = None
        self.reason: RunStatus | None = None
        self.detail: str | None = None
        """Why, in words, when the stop was not asked for (the deadline, the database)."""

    def stop(self, reason: RunStatus, detail: str | None = None) -> None:
        if self.reason is None and self._task is not None:
            self.reason = reason
            self.detail = detail
            self._task.cancel()

    async def run(self, work: Awaitable[None]) -> None:
        """Await ``work``; return quietly when it was stopped, re-raise anything else."""
        loop = asyncio.get_running_loop()
        self._task = asyncio.ensure_future(work)
        # What handled the signals before (the command line's interruption) handles them
        # again afterwards: removing ours alone would leave SIGTERM killing the process. A
        # signal the process ignores (SIGINT in a shell's background job) stays ignored.
        handlers = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
        previous = {
            sig: handler
            for sig, handler in handlers.items()
            if self._handle_signals and handler is not signal.SIG_IGN
        }
        for sig in previous:
            loop.add_signal_handler(sig, self.stop, RunStatus.INTERRUPTED)
        watcher = asyncio.create_task(self._watch())
        deadline = None
        if self._deadline_s is not None:
            deadline = loop.call_later(self._deadline_s, self._reach_deadline)
        try:
            await self._task
        except asyncio.CancelledError:
            if self.reason is None:  # cancelled from outside: not ours to swallow
                raise
        finally:
            if deadline is not None:
                deadline.cancel()
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            for sig, handler in previous.items():
                loop.remove_signal_handler(sig)
                if handler is not None:
                    signal.signal(sig, handler)

    def _reach_deadline(self) -> None:
        self.stop(
            RunStatus.INTERRUPTED, f"the run's deadline of {self._deadline_s:g} s was reached"
        )

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._poll_s)
            if await asyncio.to_thread(self._is_cancelled):
                self.stop(RunStatus.CANCELLED)
                return
