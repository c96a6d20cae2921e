"""Plan sizing from an earlier run: its cells' rates and its testers' clustering."""

from __future__ import annotations

import pytest

from corix.assessment.annotation_run import annotate_run_async
from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.execution import execute_plan
from corix.measurement import measure
from corix.measurement.sizing.plan_sizing import SizeRequest, earlier_run, size_plan
from corix.measurement.stats.sample_size import n_for_assured_width
from corix.storage import Database, session_attempts


async def test_sizes_from_an_earlier_run(sqlite_db: Database) -> None:
    plan = Plan(
        name="earlier",
        seed=5,
        applications=[
            ApplicationEntry(name="g", spec="demo:guarded"),
            ApplicationEntry(name="u", spec="demo:unguarded"),
        ],
        scenarios=["tv_spoilers"],
        levels={Level.RED_TEAMING: LevelSettings(sessions=10, max_turns=3)},
    )
    run_id = (await execute_plan(plan, sqlite_db)).run_id
    await annotate_run_async(sqlite_db, run_id)
    measurement = measure(sqlite_db, [run_id])
    earlier = earlier_run(sqlite_db, measurement)
    rates = {r.group["application"]: r.rate for r in measurement.rates(by=("application",))}
    assert earlier.rates[("g", "tv_spoilers", "red_teaming", "guardrail_violation")] == rates["g"]
    # Simulated testers cluster by persona template, per application.
    attempts = session_attempts(sqlite_db, [d.session_id for d in measurement.dialogues])
    clusters = {(d.application, attempts[d.session_id].template) for d in measurement.dialogues}
    assert earlier.per_tester == pytest.approx(len(measurement.dialogues) / len(clusters))
    assert earlier.icc is not None and 0 <= earlier.icc <= 1
    cells = size_plan(plan, SizeRequest(width=0.2), earlier)
    guarded = cells[0]
    assert guarded.rate_from == f"run {run_id}" and guarded.rate == rates["g"]
    m = max(1, round(earlier.per_tester))
    assert guarded.n_width == n_for_assured_width(
        rates["g"] or 0.0, 0.2, per_tester=m, icc=earlier.icc
    )
