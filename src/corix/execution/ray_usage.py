"""The model calls of Ray workers as they happen, so that a worker's death does not lose them.

The driver keeps one call open per worker (``SessionWorker.usage_after``) that returns the
worker's usage as soon as more model calls have finished than the driver last saw, looking
every ``step`` seconds, and asks again. A worker that dies leaves its last report
standing: the run's counts miss only the calls it finished in its last step and those it
had in flight (whose answers it never received). The step is ``USAGE_STEP_S``, longer
with many workers, so that at most ``DRIVER_REPORTS_PER_S`` reports a second reach the
driver (800 workers: one every 4 s each).
"""

from __future__ import annotations

import asyncio
from typing import Any

import ray
from ray.exceptions import RayError

from corix.domain import RunUsage

__all__ = ["DRIVER_REPORTS_PER_S", "USAGE_STEP_S", "USAGE_TIMEOUT_S", "UsageWatch", "usage_step"]

USAGE_STEP_S = 0.1
"""How often a worker looks whether model calls finished, to tell the driver."""

DRIVER_REPORTS_PER_S = 200
"""The most usage reports the driver takes a second, from all workers together."""

USAGE_TIMEOUT_S = 3.0
"""How long a stopped run waits for its live workers' last reports."""


def usage_step(workers: int) -> float:
    """Seconds between a worker's reports: ``USAGE_STEP_S``, or longer with many workers."""
    return max(USAGE_STEP_S, workers / DRIVER_REPORTS_PER_S)


class UsageWatch:
    """The latest usage each worker reported, kept up to date while the run goes on."""

    def __init__(self, workers: list[Any]) -> None:
        self._workers = workers
        self._step = usage_step(len(workers))
        self._latest: dict[int, RunUsage] = {}
        self._tasks = [
            asyncio.ensure_future(self._follow(index, worker))
            for index, worker in enumerate(workers)
        ]

    async def _follow(self, index: int, worker: Any) -> None:
        calls = 0
        while True:
            try:
                usage: RunUsage = await worker.usage_after.remote(calls, self._step)
            except RayError:
                return  # the worker is gone: its last report stands
            self._latest[index] = usage
            calls = usage.model_calls

    def stop(self) -> None:
        for task in self._tasks:
            task.cancel()

    def final(self, index: int, usage: RunUsage) -> None:
        """A worker's closing report, which counts everything it did."""
        self._latest[index] = usage

    def ask_now(self) -> None:
        """Ask every worker for its usage now (a stopped run, before they are killed),
        waiting at most ``USAGE_TIMEOUT_S``; a dead one's last report stands."""
        refs = {worker.usage.remote(): index for index, worker in enumerate(self._workers)}
        ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=USAGE_TIMEOUT_S)
        for ref in ready:
            try:
                self._latest[refs[ref]] = ray.get(ref)
            except RayError:
                continue  # died meanwhile: its last report stands

    def totals(self) -> list[RunUsage]:
        return list(self._latest.values())
