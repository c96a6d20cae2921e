"""Cancellation stays cancellation: a stop must never be stored as a failed call.

A task being cancelled may see another exception first (a library that turns the
cancellation into a timeout, a cleanup that fails). Code that records "any error" as a
failed turn or retries it asks :func:`raise_if_cancelling` first, so the stop wins.
"""

from __future__ import annotations

import asyncio

__all__ = ["raise_if_cancelling"]


def raise_if_cancelling() -> None:
    """Raise :class:`asyncio.CancelledError` when the current task has been asked to stop."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
