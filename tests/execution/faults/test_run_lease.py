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
from pathlib import Path

import pytest

from corix.cli.common import run_cli
from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.storage import Database, get_run, list_runs, shown_status


def _corix(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``corix ARGS`` in this process (its start-up is what a child would cost): the exit
    code and everything printed."""
    with pytest.raises(SystemExit) as end:
        run_cli(app, list(args))
    printed = capsys.readouterr()
    return int(end.value.code or 0), printed.out + printed.err


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
        plan = tmp_path / "plan.yaml"
        plan.write_text(
            "name: held\nseed: 2\nconcurrency: 1\n"
            f'applications:\n  - name: slow\n    spec: "openai:{base_url}"\n'
            "    options: {model: mock}\n"
            "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {repeats: 10}\n",
            encoding="utf-8",
        )
        holder = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "corix.cli.main", "run", str(plan), "--db", db.url,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
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
