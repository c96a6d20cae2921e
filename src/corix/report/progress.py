"""Whom a long job (an export, a report, a release) tells how far it has got.

The job counts its items and reports each one done; a display (the CLI's bar or plain
lines) is the caller's business.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["UNWATCHED", "Progress"]


class Progress(Protocol):
    def planned(self, total: int) -> None:
        """The job has counted its items."""

    def advance(self) -> None:
        """One more item is done."""


class _Unwatched:
    def planned(self, total: int) -> None:
        """Nobody is watching."""

    def advance(self) -> None:
        """Nobody is watching."""


UNWATCHED: Progress = _Unwatched()
