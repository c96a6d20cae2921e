"""Exit codes as the README says them when the other end of the terminal misbehaves: a
reader that stops reading, a terminal that cannot show Unicode, a Ctrl-C at any moment.
Each case needs a real process (a real pipe, a real encoding, a real signal)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path

import pytest
from cli_support import invoke

from corix.cli.exit_codes import ExitCode
from corix.cli.interrupts import raise_swallowed_interrupt, stop_on_sigterm
from corix.cli.main import main
from corix.storage import Database
from support.run_builder import write_tiny_run

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _corix(*args: str) -> list[str]:
    return [sys.executable, "-m", "corix.cli.main", *args]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC, **extra}


@pytest.fixture
async def tiny_url(sqlite_db: Database) -> str:
    await write_tiny_run(sqlite_db)
    return sqlite_db.url


def _closed_reader(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run with standard output a pipe whose reader is gone before anything is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            args, stdout=write_end, stderr=subprocess.PIPE, text=True, env=_env(), timeout=60
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("command", [["export", "run-tiny", "--db"], ["packs", "list"]])
def test_a_reader_that_stops_reading_ends_the_command_with_141(
    tiny_url: str, command: list[str]
) -> None:
    """``corix export RUN | head``: JSON lines (plain writes) and a table (the console)."""
    if command[-1] == "--db":
        command = [*command, tiny_url]
    done = _closed_reader(_corix(*command))
    assert done.returncode == ExitCode.OUTPUT_CLOSED == 141
    assert done.stderr == ""


def test_an_ascii_terminal_gets_escapes_not_an_error() -> None:
    """A pack's text has dashes: JSON stays the same JSON, a table shows them escaped."""
    ascii_env = _env(PYTHONIOENCODING="ascii")
    done = [
        subprocess.run(_corix(*args), capture_output=True, text=True, env=ascii_env, timeout=60)
        for args in (["packs", "show", "tv_spoilers", "--json"], ["packs", "show", "tv_spoilers"])
    ]
    assert [each.returncode for each in done] == [0, 0], [each.stderr for each in done]
    code, utf8_json, _ = invoke("packs", "show", "tv_spoilers", "--json")
    assert code == 0
    assert json.loads(done[0].stdout) == json.loads(utf8_json)
    assert "\\u2014" in done[1].stdout


@pytest.mark.parametrize("delay_s", [0.1, 0.3, 0.6, 1.0])
def test_ctrl_c_at_any_moment_exits_130_without_a_traceback(tiny_url: str, delay_s: float) -> None:
    """From while the commands load (the first few tenths of a second) to the query and
    past it: a Ctrl-C inside the command is an abort (Typer would make it a bare 130), one
    after it changes nothing."""
    process = subprocess.Popen(
        _corix("sessions", "list", "run-tiny", "--db", tiny_url),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env(),
    )  # fmt: skip
    time.sleep(delay_s)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    # Ended by the signal (-2: Python re-raises an interrupt it saw go unhandled, on purpose,
    # so a shell's $? is 130 all the same) or exiting 130 itself; or done before it came.
    assert process.returncode in (ExitCode.INTERRUPTED, -signal.SIGINT, ExitCode.OK), stderr
    assert "Traceback" not in stderr
    if process.returncode != ExitCode.OK:
        assert stderr.strip() == "aborted"


def test_once_the_exit_code_is_decided_a_ctrl_c_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The case above at its latest: a Ctrl-C while the interpreter shuts down would end
    corix by the signal with nothing said (seen on a loaded machine), so it is ignored."""
    monkeypatch.setattr(sys, "argv", ["corix", "packs", "list"])
    saved = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as done:
            main()
        assert done.value.code in (0, None) and "tv_spoilers" in capsys.readouterr().out
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, saved[0])
        signal.signal(signal.SIGTERM, saved[1])


def test_an_interrupt_python_swallowed_is_raised_once_the_commands_load(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Ctrl-C that lands in a weakref callback (a module lock's, while the commands load)
    would be printed with a traceback and dropped by Python; corix notes it and raises it."""
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    saved_sigterm = signal.getsignal(signal.SIGTERM)
    try:
        stop_on_sigterm()

        class Held:
            pass

        held = Held()

        def interrupted_callback(_reference: object) -> None:
            raise KeyboardInterrupt

        reference = weakref.ref(held, interrupted_callback)
        del held  # the callback's KeyboardInterrupt cannot propagate from here
        assert reference() is None
        assert "Traceback" not in capsys.readouterr().err
        with pytest.raises(KeyboardInterrupt):
            raise_swallowed_interrupt()
        raise_swallowed_interrupt()  # raised once, not again
    finally:
        signal.signal(signal.SIGTERM, saved_sigterm)
