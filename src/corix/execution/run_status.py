"""A run's status: what its row says, and how a finished run's status is decided."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["RunStatus", "finished_status"]


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETE = "complete"
    """Every planned session ran and none failed."""
    COMPLETE_WITH_FAILURES = "complete_with_failures"
    """Every planned session ran; some ended on an application, simulator or storage error,
    or the database refused some outright (``--resume`` redoes those)."""
    FAILED = "failed"
    """Every session failed, or the run stopped on an error; ``--resume`` may retry it."""
    INTERRUPTED = "interrupted"
    """Stopped by a signal (or killed); ``--resume`` finishes it."""
    CANCELLED = "cancelled"
    """Stopped for good by ``corix runs cancel``; it is not resumed."""


def finished_status(sessions: int, failed_sessions: int, missing: int = 0) -> RunStatus:
    """The status of a run whose every work item ran, from its stored session counts and
    the number of work items ``missing`` (ran, but not stored complete)."""
    if (sessions and failed_sessions >= sessions) or (missing and sessions <= failed_sessions):
        return RunStatus.FAILED
    if failed_sessions or missing:
        return RunStatus.COMPLETE_WITH_FAILURES
    return RunStatus.COMPLETE
