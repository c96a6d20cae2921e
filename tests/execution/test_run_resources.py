"""A run owns what it opens and closes all of it, whatever fails: an application whose
``close()`` raised once left a finished run ``stale`` with a summary of 0 sessions, exit 1,
and every ``--resume`` failing the same way."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from corix.domain.plan import load_plan
from corix.execution import RunStatus, execute_plan
from corix.execution.resources import OwnedResources
from corix.storage import Database, get_run, list_runs, run_totals


async def test_a_failing_close_is_logged_and_the_run_still_ends(
    any_db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: closing\nseed: 1\napplications:\n"
        "  - {name: brittle, spec: 'python:support.apps:FailingCloseApp'}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {sessions: 2}\n",
        encoding="utf-8",
    )
    with caplog.at_level(logging.WARNING):
        result = await execute_plan(load_plan(plan), any_db)
    assert result.status is RunStatus.COMPLETE
    stored = get_run(any_db, result.run_id)
    assert stored.status == "complete" and stored.lease_holder is None
    assert stored.summary.sessions == run_totals(any_db, result.run_id).sessions == 2
    assert "closing application 'brittle': RuntimeError: connection reset while closing" in (
        caplog.text
    )


async def test_every_closer_runs_in_reverse_order_even_after_a_failure() -> None:
    closed: list[str] = []

    async def close_async() -> None:
        closed.append("async")

    def fail() -> None:
        closed.append("failing")
        raise OSError("disk gone")

    resources = OwnedResources()
    resources.add("first", lambda: closed.append("first"))
    resources.add("a failing one", fail)
    resources.add("an async one", close_async)
    await resources.aclose()
    assert closed == ["async", "failing", "first"]
    assert resources.failed == ["a failing one: OSError: disk gone"]
    await resources.aclose()  # closing twice closes nothing twice
    assert closed == ["async", "failing", "first"]


async def test_the_runs_end_is_stored_whatever_stops_it_once_its_row_exists(
    any_db: Database, tmp_path: Path
) -> None:
    """The end is on the run's exit stack: a caller's progress hook that raises once the
    run is stored no longer leaves its row ``running`` (stale once the lease is gone)."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "name: hooked\nseed: 1\napplications:\n"
        "  - {name: echo, spec: 'python:support.apps:EchoApp'}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {sessions: 2}\n",
        encoding="utf-8",
    )

    def broken_progress(planned: int) -> None:
        raise RuntimeError(f"the progress display broke at {planned}")

    with pytest.raises(RuntimeError, match="broke at 2"):
        await execute_plan(load_plan(plan), any_db, on_planned=broken_progress)
    [stored] = list_runs(any_db)
    assert stored.status == RunStatus.INTERRUPTED and stored.lease_holder is None
    assert [i.status for i in stored.summary.invocations] == ["interrupted"]
    assert stored.summary.sessions == 0
