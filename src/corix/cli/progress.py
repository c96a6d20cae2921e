"""Progress of long commands, on standard error: a bar on a terminal, plain lines anywhere
else, each with the rate and the time left.

Off a terminal (a CI log, a file, a pipe) a bar would be drawn once at the end; plain
lines are written as the work goes: one when it is counted, then one per tenth done.
"""

from __future__ import annotations

import time
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["BarProgress", "LineProgress", "Tracker", "progress_for"]


class Tracker(Protocol):
    def planned(self, total: int) -> None: ...

    def advance(self) -> None: ...

    def close(self) -> None: ...


class LineProgress:
    """Progress as plain log lines: one when the work is counted, one per tenth done."""

    def __init__(self, console: Console, noun: str) -> None:
        self._console = console
        self._noun = noun
        self._total = 0
        self._done = 0
        self._started = time.monotonic()

    def planned(self, total: int) -> None:
        self._total = total
        self._started = time.monotonic()
        self._console.print(f"{self._noun}: {total} to do", soft_wrap=True)

    def advance(self) -> None:
        self._done += 1
        if self._total and self._done * 10 // self._total > (self._done - 1) * 10 // self._total:
            elapsed = time.monotonic() - self._started
            rate = self._done / elapsed if elapsed > 0 else 0.0
            left = (self._total - self._done) / rate if rate else 0.0
            self._console.print(
                f"{self._noun}: {self._done}/{self._total} done after {elapsed:.0f} s "
                f"({rate:.1f}/s, about {left:.0f} s left)",
                soft_wrap=True,
            )

    def close(self) -> None:
        """Nothing to tidy: every line is already written."""


class BarProgress:
    """A progress bar on a terminal, shown once the work is counted."""

    def __init__(self, console: Console, noun: str) -> None:
        self._progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(show_speed=True),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        )
        self._task = self._progress.add_task(noun, start=False)

    def planned(self, total: int) -> None:
        self._progress.update(self._task, total=total)
        self._progress.start_task(self._task)
        self._progress.start()

    def advance(self) -> None:
        self._progress.advance(self._task)

    def close(self) -> None:
        if self._progress.live.is_started:
            self._progress.stop()


class _Silent:
    def planned(self, total: int) -> None:
        """Nothing shown: the command's output is machine-readable."""

    def advance(self) -> None:
        """Nothing shown."""

    def close(self) -> None:
        """Nothing to tidy."""


def progress_for(console: Console, noun: str, *, quiet: bool = False) -> Tracker:
    """The tracker that suits ``console``: a bar on a terminal, else lines; none if quiet."""
    if quiet:
        return _Silent()
    if console.is_terminal:
        return BarProgress(console, noun)
    return LineProgress(console, noun)
