"""One process per run: a held run refuses a second holder by name; a dead holder's run is
``stale`` and can be deleted without ``runs cancel``.

The holder is a real ``corix run`` process (killed with SIGKILL to die), the others run
as ``corix`` processes of their own, on SQLite and PostgreSQL. The lease store's own rules
(a stale lease is taken over, a live one on another host refuses) are tested in
``tests/storage/test_lease_store.py``.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from datetime import timedelta
from pathlib import Path

import aiohttp
import pytest
from sqlalchemy import text

from corix.cli.common import run_cli
from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.storage import Database, get_run, list_runs, shown_status
from corix.storage.clock import utcnow
from corix.storage.sessions import session_states


def _corix(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``corix ARGS`` in this process (its start-up is what a child would cost): the exit
    code and everything printed."""
    with pytest.raises(SystemExit) as end:
        run_cli(app, list(args))
    printed = capsys.readouterr()
    return int(end.value.code or 0), printed.out + printed.err


def _plan(tmp_path: Path, base_url: str, head: str, levels: str) -> Path:
    """A plan testing one application behind the mock server at ``base_url``."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"{head}\n"
        f'applications:\n  - name: slow\n    spec: "openai:{base_url}"\n'
        "    options: {model: mock}\n"
        f"scenarios: [tv_spoilers]\nlevels:\n  model_testing: {levels}\n",
        encoding="utf-8",
    )
    return plan


async def _corix_run(
    plan: Path, db: Database, *, stderr: int = asyncio.subprocess.DEVNULL
) -> asyncio.subprocess.Process:
    """``corix run PLAN`` in a process of its own."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "corix.cli.main", "run", str(plan), "--db", db.url,
        stdout=asyncio.subprocess.DEVNULL, stderr=stderr,
    )  # fmt: skip


async def _held_run(db: Database) -> str:
    """The id of the run once its holder has taken the lease."""
    for _ in range(1000):
        runs = list_runs(db)
        if runs and runs[0].lease_holder is not None:
            return runs[0].id
        await asyncio.sleep(0.02)
    raise AssertionError("the run never took its lease")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_held_run_refuses_a_second_process_and_a_dead_holder_is_stale(
    backend: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db: Database = request.getfixturevalue(f"{backend}_db")
    async with running_mock_server(MockServerConfig(latency_ms=1000)) as base_url:
        plan = _plan(tmp_path, base_url, "name: held\nseed: 2\nconcurrency: 1", "{repeats: 10}")
        holder = await _corix_run(plan, db)
        try:
            run_id = await _held_run(db)
            held_by = "held by corix run on "
            for args in (
                ("run", "--resume", run_id),
                ("annotate", run_id),
                ("runs", "delete", run_id, "--yes"),
            ):
                code, output = await asyncio.to_thread(_corix, capsys, *args, "--db", db.url)
                assert code == ExitCode.USAGE, output
                assert held_by in output and f"(pid {holder.pid}," in output, output
            assert shown_status(get_run(db, run_id)) == "running"
        finally:
            holder.send_signal(signal.SIGKILL)
            await holder.wait()
        run = get_run(db, run_id)
        assert run.status == "running" and shown_status(run) == "stale"
        code, output = _corix(capsys, "runs", "list", "--json", "--db", db.url)
        assert code == 0 and json.loads(output)[0]["status"] == "stale"
        code, output = _corix(capsys, "runs", "delete", run_id, "--yes", "--db", db.url)
        assert code == 0, output  # no `runs cancel` first
    assert list_runs(db) == []


async def _mock_requests(base_url: str) -> int:
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"{base_url.removesuffix('/v1')}/mock/stats") as reply,
    ):
        return int((await reply.json())["requests"])


async def _sessions_done(db: Database, run_id: str, at_least: int) -> None:
    for _ in range(1500):
        if len([s for s in session_states(db, run_id) if s.status == "complete"]) >= at_least:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the run stored too few sessions")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_paused_holder_that_wakes_after_a_takeover_stops_and_writes_nothing(
    backend: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A holder stopped past the stale limit (SIGSTOP, a laptop lid) and resumed after
    # `--resume` took its run over kept calling models and writing: 4,983 duplicate paid
    # calls, and the finished run's status overwritten. Now its writes are fenced, and it
    # stops at once with exit 8.
    db: Database = request.getfixturevalue(f"{backend}_db")
    async with running_mock_server(MockServerConfig(latency_ms=100)) as base_url:
        plan = _plan(tmp_path, base_url, "name: paused\nseed: 3\nconcurrency: 2", "{sessions: 6}")
        paused = await _corix_run(plan, db, stderr=asyncio.subprocess.PIPE)
        try:
            run_id = await _held_run(db)
            await _sessions_done(db, run_id, 1)
            paused.send_signal(signal.SIGSTOP)
            with db.session() as s:  # what 45 s of silence look like to another process
                s.execute(
                    text("UPDATE runs SET lease_heartbeat_at = :at WHERE id = :run"),
                    {"at": utcnow() - timedelta(seconds=600), "run": run_id},
                )
            code, output = await asyncio.to_thread(
                _corix, capsys, "run", "--resume", run_id, "--db", db.url
            )
            assert code == 0, output
            before_waking = await _mock_requests(base_url)
            paused.send_signal(signal.SIGCONT)
            _, stderr = await asyncio.wait_for(paused.communicate(), timeout=30)
        finally:
            if paused.returncode is None:
                paused.send_signal(signal.SIGKILL)
                await paused.wait()
        after = await _mock_requests(base_url)
    assert paused.returncode == ExitCode.TAKEN_OVER, stderr.decode()
    assert stderr.decode().count(f"run '{run_id}' was taken over") == 1  # one line, once
    assert after - before_waking <= 2  # at most the calls it had in flight when paused
    run = get_run(db, run_id)
    assert run.status == "complete"  # the new holder's end, not overwritten
    states = session_states(db, run_id)
    keys = [state.work_key for state in states]
    assert len(keys) == len(set(keys)) == run.summary.sessions
    assert all(state.status == "complete" for state in states)
