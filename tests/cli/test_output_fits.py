"""Output that fits: help at 80 columns, every option explained, nothing cut off a terminal,
and progress as plain lines when the output is a pipe."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from cli_support import invoke
from rich.console import Console
from typer._click.core import Command  # typer vendors its own click
from typer.core import TyperOption

from corix.cli import export_cmd, personas_cmd, progress, release_cmd, report_cmds
from corix.cli.common import print_fields
from corix.cli.main import app

COMMAND = typer.main.get_command(app)


def _subcommands(command: Command) -> dict[str, Command]:
    found: dict[str, Command] = getattr(command, "commands", {})
    return found


def _commands(command: Command, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in _subcommands(command).items():
        yield from _commands(sub, (*path, name))


def _command(path: tuple[str, ...]) -> Command:
    command = COMMAND
    for name in path:
        command = _subcommands(command)[name]
    return command


COMMANDS = list(_commands(COMMAND, ()))


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) or "corix" for p in COMMANDS])
def test_help_fits_80_columns_and_explains_every_option(
    path: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(*path, "--help")
    assert code == 0, err
    assert all(len(line) <= 80 for line in out.splitlines()), out
    assert "<bool>" not in out  # a flag takes no value
    assert "``" not in out  # no reStructuredText in what people read
    assert "..." not in out.replace("[ARGS]...", "")  # no summary cut short
    metavars = re.findall(r"<(?!=)[^<>=\s]*$", out, flags=re.MULTILINE)
    assert not metavars, f"a metavar broken across lines: {metavars}"
    for param in _command(path).params:
        if isinstance(param, TyperOption) and param.name != "help":
            assert (param.help or "").strip(), f"{' '.join(path)} {param.opts[0]} has no help"


def test_persona_parameters_are_whole_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    long = {"name": "Sam", "household": "your daughter has a peanut allergy " * 4}
    monkeypatch.setattr(personas_cmd, "console", Console(force_terminal=False, width=80))
    assert personas_cmd._parameters(long).endswith("peanut allergy ")
    monkeypatch.setattr(personas_cmd, "console", Console(force_terminal=True, width=80))
    assert personas_cmd._parameters(long).endswith("…")


def test_fields_wrap_between_words_under_their_value(monkeypatch: pytest.MonkeyPatch) -> None:
    narrow = Console(width=80, record=True, force_terminal=False)
    monkeypatch.setattr("corix.cli.common.console", narrow)
    value = "schema aria-1.0: risk assessment, content characterization, dialogue dynamics, " * 2
    print_fields("2026-11-27 reference rules", [("targets", value), ("endpoint", "none")])
    lines = narrow.export_text().splitlines()
    assert all(len(line) <= 80 for line in lines)
    words = " ".join(line.strip() for line in lines).split()
    assert words == [
        "2026-11-27",
        "reference",
        "rules",
        "targets:",
        *value.split(),
        "endpoint:",
        "none",
    ]
    assert lines[2].startswith(" " * 14)  # continued under the value, not under the label


PLAN = """\
name: small
applications:
  - {name: unguarded, spec: "demo:unguarded"}
scenarios: [tv_spoilers]
levels:
  red_teaming: {sessions: 3, max_turns: 2}
"""


def _small_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.yaml").write_text(PLAN, encoding="utf-8")
    code, out, err = invoke("run", "plan.yaml")
    assert code == 0, err
    assert "sessions: 3 to do" in err and "sessions: 3/3 done after" in err
    assert "to do" not in out
    run = re.search(r"run-[0-9a-f-]+", out)
    assert run is not None
    return run.group(0)


# What each long command counts, and how many of it the small run has: a report's parts
# are its measurement, its two default trees and its three files.
LONG_COMMANDS = [
    (report_cmds, ("report", "{run}", "--bootstrap", "0", "--out", "report"), "report parts", 6),
    (export_cmd, ("export", "{run}", "--format", "csv", "--output", "tables"), "exporting "
     "sessions", 3),
    (export_cmd, ("export", "{run}", "--output", "sessions.jsonl"), "exporting sessions", 3),
    # A release reads the sessions twice (find every identifier, then replace it everywhere).
    (release_cmd, ("release", "{run}", "--out", "release"), "scanning sessions for personal "
     "information", 6),
]  # fmt: skip


def test_long_commands_off_a_terminal_print_counted_progress_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _small_run(tmp_path, monkeypatch)
    code, out, err = invoke("annotate", run)
    assert code == 0, err
    assert "to do" not in out  # progress goes to standard error, results to standard output
    lines = err.splitlines()
    assert lines[0] == "sessions: 3 to do"
    rate = r"\(\d+\.\d/(s|min), (about [\d hmins]+ left|done)\)"
    assert [
        line for line in lines if re.fullmatch(rf"sessions: \d/3 done after \d+ s {rate}", line)
    ]
    for _, argv, noun, total in LONG_COMMANDS:
        code, out, err = invoke(*(arg.format(run=run) for arg in argv))
        assert code == 0, err
        assert err.splitlines()[0] == f"{noun}: {total} to do", err
        done = [int(m.group(1)) for m in re.finditer(rf"{noun}: (\d+)/{total} done after", err)]
        assert done and done == sorted(done) and done[-1] == total, err
    code, out, err = invoke("release", "--out", "release", "--finalize", "--reviewed-by", "me")
    assert code == 0, err
    assert err.splitlines()[0] == "releasing sessions: 6 to do", err  # two passes, as above
    assert "releasing sessions: 6/6 done after" in err
    code, out, err = invoke("export", run)  # to standard output: the lines are the output
    assert code == 0, err
    assert [json.loads(line)["run_id"] for line in out.splitlines()] == [run] * 3


def test_long_commands_on_a_terminal_draw_a_counted_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _small_run(tmp_path, monkeypatch)
    for index, (_, argv, noun, total) in enumerate(LONG_COMMANDS):
        screen = io.StringIO()
        terminal = Console(file=screen, force_terminal=True, width=120)
        monkeypatch.setattr(progress, "err_console", terminal)
        args = [arg.format(run=run) for arg in argv]
        code, _, err = invoke(*args[:-1], f"{args[-1]}{index}")
        assert code == 0, err
        drawn = screen.getvalue()
        assert noun in drawn and f"{total}/{total}" in drawn, drawn
        assert re.search(r"\d+\.\d/(s|min)", drawn) and "left" in drawn, drawn  # rate, ETA
        assert "to do" not in drawn and "done after" not in drawn


def test_rate_and_time_left_by_hand() -> None:
    assert progress.rate_and_eta(10, 40, 4.0) == "2.5/s, about 12 s left"
    assert progress.rate_and_eta(1, 400, 20.0) == "3.0/min, about 2 h 13 min left"
    assert progress.rate_and_eta(5, 5, 2.0) == "2.5/s, done"
    assert progress.rate_and_eta(0, 5, 2.0) == "rate not known yet"
