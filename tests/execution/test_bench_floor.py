"""The benchmark's floor (benchmarks/bench_model_testing.py --floor): corix run with its
HTTP leg taken out makes no request and stores the mock server's reply for every turn, so
its CPU per call is the work corix adds to a call and nothing of the HTTP client's."""

import asyncio
import sys
from pathlib import Path

from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.storage import Database, iter_sessions
from support.mock_serving import mock_stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_model_testing import bench_plan, mock_reply, run_plan, scripted_pack, without_http

SESSIONS, TURNS, CONCURRENCY = 12, 3, 4


async def test_a_run_without_http_sends_nothing_and_stores_the_servers_reply(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'own.db'}"
    async with running_mock_server(MockServerConfig(latency_ms=0)) as base_url:
        reply = await asyncio.to_thread(mock_reply, base_url)
        plan = bench_plan(base_url, scripted_pack(tmp_path, SESSIONS, TURNS), CONCURRENCY)
        before = (await mock_stats(base_url))["requests"]
        with without_http(reply, latency_s=0.01):
            await run_plan(plan, url)
        assert (await mock_stats(base_url))["requests"] == before
    assert reply.text and reply.prompt_tokens > 0
    db = Database(url)
    sessions = list(iter_sessions(db))
    db.dispose()
    assert len(sessions) == SESSIONS
    replies = [turn.response_text for session in sessions for turn in session.turns]
    assert replies == [reply.text] * SESSIONS * TURNS
