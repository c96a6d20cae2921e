"""A run's life: preflight, statuses, stopping by signal or cancel, whole-run summaries."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.domain import ApplicationEntry, Level, LevelSettings, Plan, load_plan_file
from corix.errors import CorixError
from corix.execution import PreflightError, execute_plan, preflight
from corix.execution.run_status import RunStatus
from corix.llm.mock_server import running_mock_server
from corix.report.transcripts import render_transcript
from corix.storage import (
    Database,
    count_complete_sessions,
    create_run,
    get_run,
    iter_sessions,
    list_runs,
    run_totals,
    set_run_status_if,
)
from corix.storage.applications import list_applications
from corix.storage.sessions import session_states
from corix.storage.web import transaction
from corix.storage.web.applications import add_application
from support.plans import bare_plan
from support.web_records import new_series

TESTS_DIR = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture(autouse=True)
def _support_apps_importable() -> Iterator[None]:
    sys.path.insert(0, str(TESTS_DIR))
    yield
    sys.path.remove(str(TESTS_DIR))


def _echo_plan(*, concurrency: int = 8, repeats: int = 1, **options: object) -> Plan:
    return Plan(
        name="life",
        seed=3,
        applications=[
            ApplicationEntry(name="echo", spec="python:support.apps:EchoApp", options=options)
        ],
        scenarios=["tv_spoilers"],
        levels={Level.MODEL_TESTING: LevelSettings(repeats=repeats)},
        concurrency=concurrency,
    )


def _session_details(db: Database, run_id: str) -> list[str | None]:
    return [state.end_detail for state in session_states(db, run_id)]


# --- statuses ------------------------------------------------------------------------------


async def test_a_run_without_failures_is_complete(sqlite_db: Database) -> None:
    result = await execute_plan(_echo_plan(), sqlite_db)
    assert result.status is RunStatus.COMPLETE
    assert get_run(sqlite_db, result.run_id).status == "complete"
    assert set(_session_details(sqlite_db, result.run_id)) == {None}


async def test_some_failed_sessions_make_it_complete_with_failures(any_db: Database) -> None:
    result = await execute_plan(_echo_plan(fail_on="episode"), any_db)
    assert result.status is RunStatus.COMPLETE_WITH_FAILURES
    assert 0 < result.stats.failed_sessions < result.stats.sessions
    details = [d for d in _session_details(any_db, result.run_id) if d is not None]
    assert details == ["RuntimeError: cannot handle 'episode'"] * result.stats.failed_sessions
    failed = next(s for s in iter_sessions(any_db, result.run_id) if s.end_detail)
    assert "ended: app_error (RuntimeError: cannot handle 'episode')" in render_transcript(failed)


async def test_every_session_failing_makes_the_run_failed(any_db: Database) -> None:
    result = await execute_plan(_echo_plan(fail_on=" "), any_db)  # every message has a space
    assert result.stats.failed_sessions == result.stats.sessions > 0
    assert result.status is RunStatus.FAILED
    assert get_run(any_db, result.run_id).status == "failed"
    assert set(_session_details(any_db, result.run_id)) == {"RuntimeError: cannot handle ' '"}


async def test_an_application_that_will_not_open_fails_the_run(any_db: Database) -> None:
    plan = _echo_plan().model_copy(
        update={
            "applications": [ApplicationEntry(name="shut", spec="python:support.apps:RefusingApp")]
        }
    )
    result = await execute_plan(plan, any_db)
    assert result.status is RunStatus.FAILED
    assert result.error == "ApplicationError: credentials rejected"
    run = get_run(any_db, result.run_id)
    assert (run.status, run.summary.error, run.summary.sessions) == (
        "failed",
        "ApplicationError: credentials rejected",
        0,
    )


# --- preflight -----------------------------------------------------------------------------

BROKEN_PLAN = """\
name: broken
applications:
  - name: slow
    spec: "openai:http://127.0.0.1:9/v1?model=m&timeout_s=notanumber"
  - name: keyed
    spec: "openai:http://127.0.0.1:{port}/v1?model=m&key_env=CORIX_TEST_UNSET_KEY"
  - name: signed
    spec: demo:guarded
    auth_env: CORIX_TEST_UNSET_AUTH
scenarios: [tv_spoilers, no_such_pack]
levels:
  model_testing: {{}}
  red_teaming:
    engine: llm
    simulator: {{base_url: "http://127.0.0.1:9/v1", model: m}}
"""


async def test_preflight_reports_every_problem_with_its_line(
    tmp_path: Path, sqlite_db: Database
) -> None:
    async with running_mock_server() as base_url:
        port = base_url.rsplit(":", 1)[1].split("/")[0]
        path = tmp_path / "plan.yaml"
        path.write_text(BROKEN_PLAN.format(port=port), encoding="utf-8")
        with pytest.raises(PreflightError) as info:
            await execute_plan(load_plan_file(path), sqlite_db)
    found = {(str(p).split(": ", 1)[0], p.message.split(":")[0]) for p in info.value.problems}
    assert found == {
        (f"{path}:4", "application 'slow'"),  # timeout=notanumber
        (f"{path}:6", "application 'keyed'"),  # $CORIX_TEST_UNSET_KEY
        (
            f"{path}:9",
            "application 'signed' needs credentials in $CORIX_TEST_UNSET_AUTH, which is unset",
        ),
        (f"{path}:10", "unknown scenario pack 'no_such_pack'. Known"),
        (f"{path}:15", "cannot reach http"),  # the simulator's endpoint
    }
    messages = " | ".join(map(str, info.value.problems))
    assert "notanumber" in messages and "$CORIX_TEST_UNSET_KEY (key_env) is unset" in messages
    assert list_runs(sqlite_db) == []  # nothing was stored


async def test_preflight_counts_the_work_of_a_good_plan(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: ok\napplications:\n  - {name: g, spec: 'demo:guarded'}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  red_teaming: {sessions: 3}\n",
        encoding="utf-8",
    )
    checked = await preflight(load_plan_file(path))
    assert checked.planned == 3 and list(checked.packs) == ["tv_spoilers"]


def test_run_check_only_checks(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: ok\napplications:\n  - {name: g, spec: 'demo:guarded'}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  red_teaming: {sessions: 3}\n",
        encoding="utf-8",
    )
    db_file = tmp_path / "never.db"
    result = runner.invoke(app, ["run", "--check", str(path), "--db", f"sqlite:///{db_file}"])
    assert result.exit_code == 0, result.output
    assert "plan 'ok' is ready: 3 sessions" in result.output
    assert not db_file.exists()


def test_a_plan_taking_a_web_applications_name_is_refused_before_the_run_exists(
    tmp_path: Path,
) -> None:
    db_url = f"sqlite:///{tmp_path / 'web.db'}"
    db = Database(db_url)
    evaluation_id = new_series(db, "pilot", levels=["red_teaming"])
    with transaction(db) as tx:
        add_application(
            tx,
            evaluation_id,
            name="acme",
            spec="demo:guarded",
            options={},
            auth=None,
            version=None,
            check=None,
        )
    series_runs = list_runs(db)  # the series' run of people
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: clash\napplications:\n  - name: acme\n    spec: 'demo:unguarded'\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {}\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["run", str(path), "--db", db_url])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert f"{path}:3: application 'acme' belongs to the web evaluation 'pilot'" in (
        " ".join(result.output.split())
    )
    assert list_runs(db) == series_runs  # refused before the run row
    assert [(a.name, a.spec) for a in list_applications(db)] == [("acme", "demo:guarded")]
    db.dispose()


# --- exit codes ------------------------------------------------------------------------------


def _write_echo_plan(path: Path, fail_on: str) -> Path:
    path.write_text(
        "name: codes\napplications:\n  - name: echo\n    spec: python:support.apps:EchoApp\n"
        f"    options: {{fail_on: '{fail_on}'}}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("fail_on", "allow_failures", "code"),
    [
        ("episode", False, ExitCode.FAILURES),
        ("episode", True, ExitCode.OK),
        (" ", True, ExitCode.FAILED),  # every session failed: never 0
        ("no such words", False, ExitCode.OK),
    ],
)
def test_run_exit_codes(tmp_path: Path, fail_on: str, allow_failures: bool, code: int) -> None:
    plan = _write_echo_plan(tmp_path / "plan.yaml", fail_on)
    args = ["run", str(plan), "--db", f"sqlite:///{tmp_path / 'c.db'}"]
    result = runner.invoke(app, [*args, "--allow-failures"] if allow_failures else args)
    assert result.exit_code == code, result.output


# --- stopping ------------------------------------------------------------------------------


async def test_cancelling_a_running_run_stops_it_for_good(any_db: Database) -> None:
    done = 0

    def cancel_after_some(_item: object) -> None:
        nonlocal done
        done += 1
        if done == 4:  # what `corix runs cancel` does, from any process
            (run,) = list_runs(any_db)
            set_run_status_if(any_db, run.id, RunStatus.CANCELLED, allowed={"running"})

    plan = _echo_plan(concurrency=2, repeats=5, delay_ms=150)
    planned: list[int] = []
    started = time.monotonic()
    result = await asyncio.wait_for(
        execute_plan(plan, any_db, on_planned=planned.append, on_session_done=cancel_after_some),
        timeout=30,
    )
    assert result.status is RunStatus.CANCELLED
    assert time.monotonic() - started < 10  # stopped within the poll interval, not at the end
    run = get_run(any_db, result.run_id)
    assert run.status == "cancelled"
    assert result.stats.sessions < planned[0] / 2  # far from every planned session
    with pytest.raises(CorixError, match="was cancelled"):
        await execute_plan(plan, any_db, resume_run=run.id)


def _wait_for_sessions(db: Database, at_least: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = count_complete_sessions(db, [run.id for run in list_runs(db)])
        if done >= at_least:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {at_least} sessions after {timeout_s} s")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_marks_the_run_interrupted_and_resume_finishes_it(
    tmp_path: Path, stop: signal.Signals
) -> None:
    db_url = f"sqlite:///{tmp_path / 'term.db'}"
    plan_path = tmp_path / "plan.yaml"
    plan_path.write_text(
        "name: termme\nconcurrency: 2\n"
        "applications:\n  - name: slow\n    spec: python:support.apps:EchoApp\n"
        "    options: {delay_ms: 30}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {repeats: 4}\n",
        encoding="utf-8",
    )
    paths = [str(TESTS_DIR), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "CORIX_DB": db_url}
    command = [str(Path(sys.executable).with_name("corix")), "run", str(plan_path)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    db = Database(db_url)
    try:
        _wait_for_sessions(db, 5, timeout_s=60)
        process.send_signal(stop)
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == ExitCode.INTERRUPTED
    (run,) = list_runs(db)
    assert run.status == "interrupted"
    assert [i.status for i in run.summary.invocations] == ["interrupted"]

    resumed = subprocess.run(
        [*command[:2], "--resume", run.id], env=env, capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    run = get_run(db, run.id)
    assert run.status == "complete"
    sessions = run_totals(db, run.id).sessions
    assert run.summary.sessions == sessions  # the whole run, not the last invocation
    assert [i.status for i in run.summary.invocations] == ["interrupted", "complete"]
    shown = runner.invoke(app, ["runs", "show", run.id, "--json", "--db", db_url])
    assert json.loads(shown.output)["run"]["status"] == "complete"
    db.dispose()


async def test_the_summary_after_resume_covers_the_whole_run(any_db: Database) -> None:
    stopped_after = 0

    def power_cut(_item: object) -> None:
        nonlocal stopped_after
        stopped_after += 1
        if stopped_after == 6:
            raise RuntimeError("power cut")

    async with running_mock_server() as base_url:
        plan = Plan(
            name="resume-summary",
            applications=[
                ApplicationEntry(name="m", spec=f"openai:{base_url}?model=corix-mock&timeout_s=5")
            ],
            scenarios=["tv_spoilers"],
            levels={Level.MODEL_TESTING: LevelSettings(repeats=2)},
            concurrency=2,
        )
        first = await execute_plan(plan, any_db, on_session_done=power_cut)
        assert first.status is RunStatus.FAILED and first.error == "RuntimeError: power cut"
        second = await execute_plan(plan, any_db, resume_run=first.run_id)
    assert second.status is RunStatus.COMPLETE
    stored = list(iter_sessions(any_db, first.run_id))
    assert run_totals(any_db, first.run_id).sessions == len(stored)  # none left cut
    sessions, turns = len(stored), sum(len(session.turns) for session in stored)
    prompt_tokens = sum(turn.prompt_tokens or 0 for session in stored for turn in session.turns)
    summary = get_run(any_db, first.run_id).summary
    assert summary == second.stats
    assert (summary.sessions, summary.turns) == (sessions, turns)
    assert summary.prompt_tokens == prompt_tokens > 0
    invocations = summary.invocations
    assert [i.status for i in invocations] == ["failed", "complete"]
    assert summary.usage.model_calls == sum(i.usage.model_calls for i in invocations)
    # Calls of the first invocation's discarded sessions were made too: at least one per turn.
    assert summary.usage.model_calls >= turns
    assert invocations[0].usage.model_calls > 0 and invocations[1].usage.model_calls > 0


# --- cancel and delete from the command line ----------------------------------------------------


def test_runs_cancel_and_delete(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'cli.db'}"
    plan = _write_echo_plan(tmp_path / "plan.yaml", "no such words")
    assert runner.invoke(app, ["run", str(plan), "--db", db_url]).exit_code == 0
    db = Database(db_url)
    (run,) = list_runs(db)
    refused = runner.invoke(app, ["runs", "cancel", run.id, "--db", db_url])
    assert refused.exit_code == ExitCode.USAGE and "is complete" in refused.output

    deleted = runner.invoke(app, ["runs", "delete", run.id, "--yes", "--db", db_url])
    assert deleted.exit_code == 0, deleted.output
    assert session_states(db) == []  # no session, and so no turn, is left
    assert (run_totals(db, run.id).sessions, run_totals(db, run.id).turns) == (0, 0)
    assert list_runs(db) == []
    db.dispose()


def test_a_stale_running_run_is_deleted_without_cancel(any_db: Database) -> None:
    create_run(any_db, "run-stale", name="stale", plan=bare_plan(), seed=0)  # no process holds it
    url = any_db.url
    listed = runner.invoke(app, ["runs", "list", "--json", "--db", url])
    assert json.loads(listed.output)[0]["status"] == "stale"
    assert runner.invoke(app, ["runs", "delete", "run-stale", "--yes", "--db", url]).exit_code == 0
    assert list_runs(any_db) == []


async def test_each_invocation_stops_at_the_deadline_and_resumes_go_on(
    sqlite_db: Database,
) -> None:
    plan = _echo_plan(concurrency=1, delay_ms=50).model_copy(update={"deadline_s": 0.3})
    started = time.monotonic()
    stopped = await execute_plan(plan, sqlite_db)
    assert time.monotonic() - started < 5
    assert stopped.status is RunStatus.INTERRUPTED
    assert stopped.error == "the run's deadline of 0.3 s was reached"
    assert get_run(sqlite_db, stopped.run_id).summary.error == stopped.error
    # The deadline is part of the stored plan, so each resumed invocation has it too.
    result = stopped
    for _ in range(30):
        result = await execute_plan(plan, sqlite_db, resume_run=stopped.run_id)
        if result.status is not RunStatus.INTERRUPTED:
            break
    assert result.status is RunStatus.COMPLETE
    assert result.stats.failed_sessions == 0
