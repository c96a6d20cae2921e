"""SIGTERM stops a command the way Ctrl-C does: one clean-stop path for both.

A person stops a command with Ctrl-C (SIGINT); a service manager, a container runtime, a
CI job's timeout or ``kill`` sends SIGTERM. Python turns SIGINT into ``KeyboardInterrupt``
(inside ``asyncio.run``, into cancelling the command's main task), and every command's
clean stop already follows from that: transactions roll back, files written atomically
are removed half-done, leases are released, a run is marked ``interrupted``, the command
exits 130. So SIGTERM is handed to whatever handles SIGINT at that moment. Code that
stops more gently (a run's ``RunStopper``, uvicorn) installs its own handlers for both
signals meanwhile and restores these when it is done. A process started with SIGINT
ignored (a shell's background job) keeps ignoring it; ``asyncio.run`` then handles no
Ctrl-C, so the long async commands run under :func:`corix.execution.run_stoppable`,
which cancels their work on SIGTERM itself.

A Ctrl-C can also land where Python cannot raise it: in a callback it runs for itself (a
module lock's weakref callback while the commands load). Python would print "Exception
ignored … KeyboardInterrupt" with a traceback and go on as if no key was pressed. Such an
interrupt is noted instead, without a traceback, and raised once the commands have loaded
(:func:`raise_swallowed_interrupt`), so the command stops as for any Ctrl-C; one that lands
so while a command runs only loses its traceback (the key can be pressed again).
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType

__all__ = ["raise_swallowed_interrupt", "stop_on_sigterm"]


def stop_on_sigterm() -> None:
    """From now on SIGTERM interrupts as SIGINT does, and an interrupt Python had to
    swallow is noted (signals are the main thread's)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _as_interrupt)
        if not isinstance(sys.unraisablehook, _NoteInterrupts):
            sys.unraisablehook = _NoteInterrupts(sys.unraisablehook)


def raise_swallowed_interrupt() -> None:
    """Raise ``KeyboardInterrupt`` if one was swallowed since the last call."""
    hook = sys.unraisablehook
    if isinstance(hook, _NoteInterrupts) and hook.swallowed:
        hook.swallowed = False
        raise KeyboardInterrupt


class _NoteInterrupts:
    """An unraisable-exception hook that notes a swallowed KeyboardInterrupt (raising it
    here would only have it swallowed again) and passes every other exception on."""

    def __init__(self, previous: object) -> None:
        self.previous = previous
        self.swallowed = False

    def __call__(self, unraisable: sys.UnraisableHookArgs) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            self.swallowed = True
        elif callable(self.previous):
            self.previous(unraisable)


def _as_interrupt(_signum: int, frame: FrameType | None) -> None:
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        # Python's default raises KeyboardInterrupt; asyncio.run's cancels its main task
        # (and raises only on a second signal).
        handler(signal.SIGINT, frame)
    else:
        # SIGINT ignored (a script's background job is started so): SIGTERM still stops.
        raise KeyboardInterrupt
