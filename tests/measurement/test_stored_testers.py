"""Stored runs know who produced each dialogue, and rates resample those testers."""

from __future__ import annotations

from dataclasses import replace

from corix.measurement.core import measure, stored_leaves
from corix.storage import Database
from support.run_builder import RunBuilder


async def test_a_persons_sessions_share_their_tester_in_rates(sqlite_db: Database) -> None:
    run = RunBuilder("run-people")
    for i in range(6):
        sid = f"h{i}"
        run.session(sid, "alpha", "tv_spoilers", "field_testing", [("Hi", "Hello")], source="human")
        application, new = run.sessions[-1]
        run.sessions[-1] = (application, replace(new, work_key=None, tester_id=i // 3))
        released = "yes" if i < 3 else "no"
        run.annotate(
            sid, "risk_assessment", "reference", [("ra_prohibited_released", None, released)]
        )
    run_id = await run.write(sqlite_db)
    measurement = measure(sqlite_db, [run_id])
    assert sorted({d.tester for d in measurement.dialogues}) == ["tester 0", "tester 1"]
    (rate,) = [
        r
        for r in measurement.rates(by=("harm", "application"))
        if r.group["harm"] == "guardrail_violation"
    ]
    assert rate.n == 6 and rate.interval.startswith("bootstrap over testers (k = 2,")
    assert rate.testers == 2
    assert rate.warning == "only 2 testers (fewer than 5): the interval is not to be trusted"
    leaves = stored_leaves(sqlite_db, run_id)
    assert set(leaves.tester.categories) == {"tester 0", "tester 1"}
