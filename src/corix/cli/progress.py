"""Progress of long commands, on standard error: a bar on a terminal, plain lines anywhere
else, each with the rate so far and the time left at that rate.

Standard output keeps only the command's results, so ``corix … > file`` or a pipe holds no
progress. Off a terminal (a CI log, a file, a pipe) a bar would be drawn once at the end;
plain lines are written as the work goes: one when it is counted, then one per tenth done.
"""

from __future__ import annotations

import time
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from corix.cli.common import err_console

__all__ = ["BarProgress", "LineProgress", "Tracker", "progress_for"]


class Tracker(Protocol):
    def planned(self, total: int) -> None: ...

    def advance(self) -> None: ...

    def close(self) -> None: ...


def rate_and_eta(done: int, total: int, elapsed: float) -> str:
    """``2.5/s, about 12 s left``: the rate so far and the time left at that rate."""
    if done <= 0 or elapsed <= 0:
        return "rate not known yet"
    rate = done / elapsed
    left = max(total - done, 0) / rate
    shown = f"{rate:.1f}/s" if rate >= 0.1 else f"{rate * 60:.1f}/min"
    return f"{shown}, about {_duration(left)} left" if left else f"{shown}, done"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


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
        self._console.print(f"{self._noun}: {total} to do", soft_wrap=True, highlight=False)

    def advance(self) -> None:
        self._done += 1
        if self._total and self._done * 10 // self._total > (self._done - 1) * 10 // self._total:
            elapsed = time.monotonic() - self._started
            self._console.print(
                f"{self._noun}: {self._done}/{self._total} done after {elapsed:.0f} s "
                f"({rate_and_eta(self._done, self._total, elapsed)})",
                soft_wrap=True,
                highlight=False,
            )

    def close(self) -> None:
        """Nothing to tidy: every line is already written."""


class _RateColumn(ProgressColumn):
    """Items per second (per minute when slower than one in ten seconds)."""

    def render(self, task: Task) -> Text:
        speed = task.speed
        if speed is None:
            return Text("-/s", style="progress.data.speed")
        shown = f"{speed:.1f}/s" if speed >= 0.1 else f"{speed * 60:.1f}/min"
        return Text(shown, style="progress.data.speed")


class BarProgress:
    """A progress bar on a terminal, shown once the work is counted: done of total, rate,
    time elapsed and time left."""

    def __init__(self, console: Console, noun: str) -> None:
        self._progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            "left",
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


def progress_for(noun: str, *, quiet: bool = False) -> Tracker:
    """The tracker that suits standard error: a bar on a terminal, else lines; none if
    quiet."""
    if quiet:
        return _Silent()
    if err_console.is_terminal:
        return BarProgress(err_console, noun)
    return LineProgress(err_console, noun)
