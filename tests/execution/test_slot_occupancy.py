"""Slots stay busy: a model-testing run keeps its endpoint's bound in flight.

A run that leaves slots waiting between calls shows it first as requests in flight at the
mock server, before any wall time is long enough to notice (issue 36: an endpoint that
had to climb from 2 in flight to its bound took 1.55x the ideal wall instead of 1.10x).
The benchmark's plan and occupancy figure (benchmarks/bench_model_testing.py) at a small
size.
"""

import sys
from pathlib import Path

import pytest

from corix.domain import ApplicationEntry, Plan
from corix.llm.mock_server import MockServerConfig, running_mock_server
from support.mock_serving import mock_stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _bench_support import slot_occupancy
from bench_model_testing import bench_plan, run_plan, scripted_pack

SESSIONS, TURNS, CONCURRENCY, LATENCY_S = 60, 3, 20, 0.3


def _declared_by_its_old_name(plan: Plan) -> Plan:
    """The plan as written before endpoints adapted: ``concurrency=N`` (issue 36)."""
    (entry,) = plan.applications
    base_url = entry.spec.split("?")[0]
    spec = f"{base_url}?model=corix-mock&concurrency={CONCURRENCY}&max_retries=0"
    return plan.model_copy(update={"applications": [ApplicationEntry(name=entry.name, spec=spec)]})


@pytest.mark.filterwarnings("ignore:option 'concurrency'")
@pytest.mark.parametrize("declared", ["max_concurrency, fixed", "old name concurrency"])
async def test_the_steady_part_holds_the_bound_in_flight(tmp_path: Path, declared: str) -> None:
    async with running_mock_server(MockServerConfig(latency_ms=LATENCY_S * 1000)) as base_url:
        plan = bench_plan(base_url, scripted_pack(tmp_path, SESSIONS, TURNS), CONCURRENCY)
        if declared == "old name concurrency":
            plan = _declared_by_its_old_name(plan)
        before = await mock_stats(base_url)
        await run_plan(plan, f"sqlite:///{tmp_path / 'run.db'}")
        after = await mock_stats(base_url)
    slots = slot_occupancy(before, after, CONCURRENCY, ramp_s=LATENCY_S, drain_s=TURNS * LATENCY_S)
    assert slots.median_fraction >= 0.95, slots.describe()
