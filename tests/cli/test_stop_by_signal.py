"""Every long command stops cleanly on SIGTERM, as on Ctrl-C: exit 130, nothing half-done
that looks complete, and what was stopped resumes to exactly the end (issue 35, item 6).

A real SIGTERM is sent to the command's process at a known moment of its work (from the
work itself: a progress step, a session starting, a row stored), so each case is exact;
``corix`` handles it as a terminal's Ctrl-C. ``serve`` and a command still loading run in
a process of their own.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_support import invoke

from corix.cli.exit_codes import ExitCode
from corix.llm.mock_server import MockServerConfig
from corix.storage import Database, get_run, list_runs
from corix.storage.annotations import load_passes
from corix.storage.sessions import session_states
from support.apps import SESSIONS_STARTED
from support.mock_serving import serving

SRC = str(Path(__file__).resolve().parents[2] / "src")
TESTS = str(Path(__file__).resolve().parents[1])


BOTH = pytest.mark.parametrize("db", ["sqlite", "postgres"], indirect=True)
"""Also on PostgreSQL (issue 35's row 6 was found on both)."""


@pytest.fixture
def db(request: pytest.FixtureRequest) -> Database:
    """SQLite, or the backend the test's ``db`` parameter names."""
    backend = getattr(request, "param", "sqlite")
    database: Database = request.getfixturevalue(f"{backend}_db")
    return database


def _sigterm_self() -> None:
    os.kill(os.getpid(), signal.SIGTERM)


class _SigtermAtFirstStep:
    """A progress tracker through which one SIGTERM arrives once the first step is done
    (a second would force the stop, as a second Ctrl-C does)."""

    def __init__(self) -> None:
        self.sent = False

    def planned(self, total: int) -> None:
        pass

    def advance(self) -> None:
        if not self.sent:
            self.sent = True
            _sigterm_self()

    def close(self) -> None:
        pass


def _terminated_at_first_step(monkeypatch: pytest.MonkeyPatch, module: Any) -> None:
    monkeypatch.setattr(module, "progress_for", lambda *_a, **_k: _SigtermAtFirstStep())


@pytest.fixture
def echo_run(db: Database, tmp_path: Path) -> str:
    """A stored run of complete sessions (tv_spoilers' scripts against an echo)."""
    plan = tmp_path / "echo.yaml"
    plan.write_text(
        "name: echo\nseed: 3\napplications:\n"
        "  - {name: echo, spec: 'python:support.apps:EchoApp'}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {repeats: 1}\n",
        encoding="utf-8",
    )
    code, _, err = invoke("run", str(plan), "--db", db.url)
    assert code == 0, err
    (run,) = list_runs(db)
    return run.id


def _sequential_plan(tmp_path: Path, *, at: int) -> Path:
    """Waves of 4 dialogues; the application's ``at``-th session sends SIGTERM."""
    plan = tmp_path / "waves.yaml"
    plan.write_text(
        "name: waves\nseed: 3\nconcurrency: 2\napplications:\n"
        "  - name: echo\n    spec: 'python:support.apps:SignallingApp'\n"
        f"    options: {{at: {at}, name: '{tmp_path.name}', delay_ms: 5}}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {repeats: 1}\n",
        encoding="utf-8",
    )
    return plan


def _assert_resumes_exactly(db: Database, run_id: str) -> None:
    code, _, err = invoke("run", "--resume", run_id, "--db", db.url)
    assert code == 0, err
    run = get_run(db, run_id)
    assert run.status == "complete"
    keys = Counter(state.work_key for state in session_states(db, run_id))
    assert keys and max(keys.values()) == 1  # each dialogue once, the stopped ones redone
    assert run.summary.sessions == len(keys)


@BOTH
def test_sigterm_during_a_wave_leaves_the_sequential_run_interrupted(
    db: Database, tmp_path: Path
) -> None:
    """The 6th session is in the second wave: it was left ``running`` (exit 143)."""
    plan = _sequential_plan(tmp_path, at=6)
    code, out, err = invoke(
        "run", str(plan), "--until", "width=0.05", "--wave", "4", "--db", db.url
    )
    assert code == ExitCode.INTERRUPTED, err
    (run,) = list_runs(db)
    assert run.status == "interrupted"
    assert run.summary.sequential is not None  # a resume goes on in waves, under its rule
    assert f"corix run --resume {run.id}" in " ".join(out.split())
    _assert_resumes_exactly(db, run.id)


@BOTH
def test_sigterm_between_waves_leaves_the_sequential_run_interrupted(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after the first wave is judged, before the next starts: it stayed marked
    as the finished first wave's invocation left it."""
    import corix.cli.sequential_cmd

    monkeypatch.setattr(corix.cli.sequential_cmd, "_print_wave", lambda *_a: _sigterm_self())
    plan = _sequential_plan(tmp_path, at=10_000)
    code, _, err = invoke("run", str(plan), "--until", "width=0.05", "--wave", "4", "--db", db.url)
    assert code == ExitCode.INTERRUPTED, err
    (run,) = list_runs(db)
    assert run.status == "interrupted"
    assert run.summary.sequential is not None and run.summary.missing_sessions == 0
    monkeypatch.undo()
    _assert_resumes_exactly(db, run.id)


@BOTH
def test_sigterm_during_annotate_keeps_what_was_stored(
    db: Database, echo_run: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An LLM judge answering in 50 ms, two sessions at a time: stopped after the first."""
    import corix.cli.annotate_cmds

    _terminated_at_first_step(monkeypatch, corix.cli.annotate_cmds)
    with serving(MockServerConfig(latency_ms=50)) as url:
        args = ["annotate", echo_run, "--categories", "risk_assessment", "--annotator", "llm"]
        args += ["--endpoint-url", url, "--model", "corix-mock", "--concurrency", "2"]
        args += ["--allow-failures", "--db", db.url]
        code, _, err = invoke(*args)
        assert code == ExitCode.INTERRUPTED, err
        assert "the same command adds the rest" in " ".join(err.split())
        assert get_run(db, echo_run).lease_holder is None  # nothing holds the run
        stopped = len(load_passes(db, run_id=echo_run))
        monkeypatch.undo()
        code, _, err = invoke(*args, "--json")
    assert code == ExitCode.OK, err
    passes = load_passes(db, run_id=echo_run)
    sessions = get_run(db, echo_run).summary.sessions
    assert len(passes) == len({p.session_id for p in passes}) == sessions  # none twice
    assert 0 < stopped < sessions


@BOTH
def test_sigterm_stops_a_background_annotate_whose_sigint_is_ignored(
    db: Database, echo_run: str, process_env: dict[str, str]
) -> None:
    """``corix annotate … &`` from a shell without job control runs with SIGINT ignored
    (asyncio then handles no Ctrl-C): SIGTERM, sent as the first pass waits for its commit,
    still stops it cleanly. That pass was lost (the writer cancelled with its batch)."""
    with serving(MockServerConfig(latency_ms=5)) as url:
        args = ["annotate", echo_run, "--categories", "risk_assessment", "--annotator", "llm"]
        args += ["--endpoint-url", url, "--model", "corix-mock", "--db", db.url]
        in_background = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", sys.executable]
        stopped = subprocess.run(
            [*in_background, "-m", "support.terminated_cli", *args, "--concurrency", "1"],
            capture_output=True, text=True, env=process_env, timeout=120,
        )  # fmt: skip
        assert stopped.returncode == ExitCode.INTERRUPTED, stopped.stderr
        assert "the same command adds the rest" in " ".join(stopped.stderr.split())
        assert "Traceback" not in stopped.stderr
        assert get_run(db, echo_run).lease_holder is None
        kept = {p.session_id for p in load_passes(db, run_id=echo_run)}
        assert len(kept) == 1  # the session whose pass was queued when the signal came
        code, _, err = invoke(*args)
    assert code == ExitCode.OK, err
    passes = load_passes(db, run_id=echo_run)
    assert len(passes) == len({p.session_id for p in passes})  # none twice
    assert len(passes) == get_run(db, echo_run).summary.sessions


def test_a_background_run_ignores_sigint_and_stops_cleanly_on_sigterm(
    db: Database,
    tmp_path: Path,
    process_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``corix run … &`` from a shell without job control: the Ctrl-C meant for the
    foreground job (as the 2nd session begins) is ignored, SIGTERM (as the 6th begins)
    stops it cleanly. The run's own signal handling took SIGINT back and stopped at the 2nd."""
    plan = tmp_path / "background.yaml"
    plan.write_text(
        "name: background\nseed: 3\nconcurrency: 1\napplications:\n"
        "  - name: echo\n    spec: 'python:support.apps:SignallingApp'\n"
        f"    options: {{at: 6, interrupt_at: 2, name: '{tmp_path.name}', delay_ms: 5}}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {repeats: 1}\n",
        encoding="utf-8",
    )
    in_background = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", sys.executable]
    stopped = subprocess.run(
        [*in_background, "-m", "corix.cli.main", "run", str(plan), "--db", db.url],
        capture_output=True, text=True, env=process_env, timeout=120,
    )  # fmt: skip
    assert stopped.returncode == ExitCode.INTERRUPTED, stopped.stderr
    assert "Traceback" not in stopped.stderr
    (run,) = list_runs(db)
    assert run.status == "interrupted"
    assert run.lease_holder is None
    assert run.summary.sessions == 6  # started before the SIGTERM, not 2 as at the Ctrl-C
    # The resume, in this process, starts its sessions past both signals.
    monkeypatch.setitem(SESSIONS_STARTED, tmp_path.name, 6)
    _assert_resumes_exactly(db, run.id)


def test_sigterm_during_import_stores_nothing(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped as the second dialogue is stored, inside the import's one transaction."""
    import corix.storage.runs

    source = tmp_path / "dialogues.jsonl"
    dialogue = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    source.write_text(
        "".join(json.dumps({"id": f"d{i}", "messages": dialogue}) + "\n" for i in range(5)),
        encoding="utf-8",
    )
    stored = corix.storage.runs.store_session
    calls = Counter[str]()

    def storing(*args: Any, **kwargs: Any) -> Any:
        calls["sessions"] += 1
        if calls["sessions"] == 2:
            _sigterm_self()
        return stored(*args, **kwargs)

    monkeypatch.setattr(corix.storage.runs, "store_session", storing)
    args = ["import", str(source), "--application", "a", "--scenario", "tv_spoilers"]
    args += ["--level", "model_testing", "--db", db.url]
    code, _, err = invoke(*args)
    assert code == ExitCode.INTERRUPTED, err
    assert list_runs(db) == []
    code, _, err = invoke(*args)
    assert code == ExitCode.OK, err
    (run,) = list_runs(db)
    assert run.summary.sessions == 5


def test_sigterm_during_export_leaves_no_file(
    db: Database, echo_run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import corix.cli.export_cmd

    _terminated_at_first_step(monkeypatch, corix.cli.export_cmd)
    folder = tmp_path / "exports"
    folder.mkdir()
    out = folder / "sessions.jsonl"
    code, _, err = invoke("export", echo_run, "-o", str(out), "--db", db.url)
    assert code == ExitCode.INTERRUPTED, err
    assert list(folder.iterdir()) == []  # neither a half file nor a temporary one
    monkeypatch.undo()
    code, _, err = invoke("export", echo_run, "-o", str(out), "--db", db.url)
    assert code == ExitCode.OK, err
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == get_run(db, echo_run).summary.sessions


def test_sigterm_during_report_writes_no_report(
    db: Database, echo_run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import corix.cli.report_cmds

    _terminated_at_first_step(monkeypatch, corix.cli.report_cmds)
    out = tmp_path / "report"
    args = ["report", echo_run, "--out", str(out), "--bootstrap", "50", "--db", db.url]
    code, _, err = invoke(*args)
    assert code == ExitCode.INTERRUPTED, err
    assert not out.exists() or list(out.iterdir()) == []
    monkeypatch.undo()
    code, _, err = invoke(*args)
    assert code == ExitCode.OK, err
    assert sorted(path.name for path in out.iterdir()) == [
        "report.html",
        "report.json",
        "report.md",
    ]


def test_sigterm_during_release_leaves_no_review(
    db: Database, echo_run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import corix.cli.release_cmd

    _terminated_at_first_step(monkeypatch, corix.cli.release_cmd)
    out = tmp_path / "release"
    code, _, err = invoke("release", echo_run, "--out", str(out), "--db", db.url)
    assert code == ExitCode.INTERRUPTED, err
    assert not (tmp_path / "release.review" / "review.csv").exists()
    monkeypatch.undo()
    code, _, err = invoke("release", echo_run, "--out", str(out), "--db", db.url)
    assert code == ExitCode.OK, err
    assert (tmp_path / "release.review" / "review.csv").exists()


def _corix(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "corix.cli.main", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_until(
    ready: Callable[[], bool], process: subprocess.Popen[str], timeout_s: float
) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, "not ready in time"
        time.sleep(0.05)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def process_env(db: Database) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, TESTS]), "CORIX_DB": db.url}


@pytest.mark.slow  # a server process's start: 2-3 s, 20 s on a loaded host
def test_sigterm_stops_serve_with_130(process_env: dict[str, str]) -> None:
    """The server shuts down cleanly, then exits as an interrupted command (it died of
    the signal, 143, when uvicorn passed it on)."""
    port = _free_port()
    server = _corix("serve", "--port", str(port), env=process_env)
    try:
        _wait_until(lambda: _listening(port), server, timeout_s=60)
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.returncode == ExitCode.INTERRUPTED, stderr
    assert "Traceback" not in stderr


def test_sigterm_while_the_commands_load_exits_130(process_env: dict[str, str]) -> None:
    command = _corix("runs", "list", env=process_env)
    time.sleep(0.2)
    command.send_signal(signal.SIGTERM)
    _, stderr = command.communicate(timeout=60)
    assert command.returncode in (ExitCode.INTERRUPTED, ExitCode.OK), stderr
    assert "Traceback" not in stderr
