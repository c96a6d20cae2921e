"""Signals stop async work cleanly in a process that ignores SIGINT (a shell's background
job): SIGTERM cancels the work, which cleans up, and SIGINT stays ignored throughout."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator

import pytest

from corix.execution import RunStatus, run_stoppable
from corix.execution.run_stopper import RunStopper


@pytest.fixture
def sigint_ignored() -> Iterator[None]:
    saved = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved[0])
        signal.signal(signal.SIGTERM, saved[1])


@pytest.mark.usefixtures("sigint_ignored")
def test_sigterm_cancels_the_main_task_which_cleans_up_then_interrupts() -> None:
    cleaned: list[str] = []

    def before(_signum: int, _frame: object) -> None:
        pass  # the command line's own handler, put back afterwards

    signal.signal(signal.SIGTERM, before)

    async def work() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(0)  # cleanup that awaits still runs
            cleaned.append("done")

    with pytest.raises(KeyboardInterrupt):
        run_stoppable(work())
    assert cleaned == ["done"]
    assert signal.getsignal(signal.SIGTERM) is before
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_work_that_ends_returns_its_value() -> None:
    async def work() -> int:
        await asyncio.sleep(0)
        return 7

    assert run_stoppable(work()) == 7


@pytest.mark.usefixtures("sigint_ignored")
def test_a_run_stopper_leaves_an_ignored_sigint_ignored_and_stops_on_sigterm() -> None:
    seen: list[object] = []
    stopper = RunStopper(lambda: False, handle_signals=True, poll_s=60)

    async def work() -> None:
        seen.append(signal.getsignal(signal.SIGINT))
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.sleep(30)

    asyncio.run(stopper.run(work()))
    assert seen == [signal.SIG_IGN]  # a Ctrl-C meant for the foreground job stops nothing
    assert stopper.reason is RunStatus.INTERRUPTED
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
