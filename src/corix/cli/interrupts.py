"""SIGTERM stops a command the way Ctrl-C does: one clean-stop path for both.

A person stops a command with Ctrl-C (SIGINT); a service manager, a container runtime, a
CI job's timeout or ``kill`` sends SIGTERM. Python turns SIGINT into ``KeyboardInterrupt``
(inside ``asyncio.run``, into cancelling the command's main task), and every command's
clean stop already follows from that: transactions roll back, files written atomically
are removed half-done, leases are released, a run is marked ``interrupted``, the command
exits 130. So SIGTERM is handed to whatever handles SIGINT at that moment. Code that
stops more gently (a run's ``RunStopper``, uvicorn) installs its own handlers for both
signals meanwhile and restores these when it is done.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

__all__ = ["stop_on_sigterm"]


def stop_on_sigterm() -> None:
    """From now on SIGTERM interrupts as SIGINT does (signals are the main thread's)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _as_interrupt)


def _as_interrupt(_signum: int, frame: FrameType | None) -> None:
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        # Python's default raises KeyboardInterrupt; asyncio.run's cancels its main task
        # (and raises only on a second signal).
        handler(signal.SIGINT, frame)
    else:
        # SIGINT ignored (a script's background job is started so): SIGTERM still stops.
        raise KeyboardInterrupt
