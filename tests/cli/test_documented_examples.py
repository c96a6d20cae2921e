"""Every ``corix`` command in a code block of README.md and docs/*.md runs, and succeeds.

The blocks are read from the documents themselves, so an example cannot drift from what
corix does. Each runs in a folder holding a small run (``RUN``), a plan (``plan.yaml``)
and the files the examples name; ports become free ones and a PostgreSQL URL a SQLite
file — a fresh database on the test PostgreSQL server when there is one, so the web
set-up steps run on PostgreSQL as written. Servers (``corix serve``, a line ending in
``&``) must come up and listen. The few commands that need what a test machine lacks are
listed below with the reason.
"""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_support import invoke

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CORIX = Path(sys.executable).with_name("corix")
SHELL_BLOCKS = {"", "bash", "sh", "shell", "console"}

NOT_RUN = {
    "--endpoint local:": "needs the local extra (llama.cpp built from source) and a 98 MB model",
    ".eval ": "needs an Inspect AI log (test_import_formats.py imports real ones)",
    "--ray-address auto": "needs a Ray cluster already running",
    "--ray-address ray://": "needs a Ray cluster reached through Ray Client",
}
"""Commands not run here, by a fragment of them, with the reason."""

SLOW = ("--executor ray", "corix demo", "--workers ")
"""Examples that take more than a few seconds (starting Ray; the whole demo; a server of
several processes, 16–18 s each on CI, whose sharing of one database tests/web's process
tests check in the default run; README's one-process web set-up stays in it)."""

PLAN = """\
name: documented
applications:
  - {name: unguarded, spec: "demo:unguarded"}
scenarios: [tv_spoilers]
levels:
  red_teaming: {sessions: 3, max_turns: 2}
"""


@dataclass(frozen=True)
class Example:
    where: str
    commands: tuple[str, ...]


def _logical_lines(block: str) -> Iterator[str]:
    pending = ""
    for line in block.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield pending + line
        pending = ""


def _corix_commands(line: str) -> Iterator[str]:
    """The ``corix …`` parts of a shell line, comments dropped, ``&`` kept."""
    for part in re.split(r"&&|;", line.split(" #")[0]):
        words = part.split()
        if words and (words[0] == "corix" or words[0].endswith("/corix")):
            yield "corix " + " ".join(words[1:])


def documented_examples() -> list[Example]:
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for block in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.M | re.S):
            if block.group(1) not in SHELL_BLOCKS:
                continue
            commands = tuple(
                command
                for line in _logical_lines(block.group(2))
                for command in _corix_commands(line)
            )
            if commands:
                line = text.count("\n", 0, block.start()) + 1
                found.append(Example(f"{document.relative_to(ROOT)}:{line}", commands))
    return found


EXAMPLES = documented_examples()


def _param(example: Example) -> object:
    slow = any(fragment in command for command in example.commands for fragment in SLOW)
    return pytest.param(example, id=example.where, marks=[pytest.mark.slow] if slow else [])


@dataclass(frozen=True)
class Workspace:
    folder: Path
    run: str


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    folder = tmp_path_factory.mktemp("documented")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.delenv("CORIX_DB", raising=False)
        (folder / "plan.yaml").write_text(PLAN, encoding="utf-8")
        (folder / "team-names.txt").write_text("Robin Lee\n", encoding="utf-8")
        code, out, err = invoke("run", "plan.yaml")
        assert code == 0, err
        run = re.search(r"run-[0-9]{8}-[0-9]{6}-[0-9a-f]{4}", out)
        assert run is not None, out
        yield Workspace(folder, run.group(0))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited instead of listening"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listened on port {port} within {timeout_s} s")


def _filled(command: str, workspace: Workspace, port: int, postgres: str) -> str:
    command = re.sub(r"\bRUN\b", workspace.run, command)
    command = command.replace("8000", str(port))
    return re.sub(r"postgresql://\S+", postgres, command)


def _postgres_or_sqlite(example: Example, request: pytest.FixtureRequest) -> str:
    """A fresh PostgreSQL database for an example that names one, when the test server is
    up; else a SQLite file of its own (every command of the example shares it either way)."""
    place = re.sub(r"\W", "-", example.where)
    own_file = f"sqlite:///web-{place}.db"
    if not any("postgresql://" in command for command in example.commands):
        return own_file
    try:
        make = request.getfixturevalue("postgres_databases")
    except pytest.skip.Exception:
        return own_file
    return str(make())


def test_the_documents_have_examples() -> None:
    places = {example.where.split(":")[0] for example in EXAMPLES}
    assert {"README.md", "docs/formats.md", "docs/scaling.md"} <= places


@pytest.mark.parametrize("example", [_param(example) for example in EXAMPLES])
def test_a_documented_example_succeeds(
    example: Example,
    workspace: Workspace,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    skipped = [why for c in example.commands for part, why in NOT_RUN.items() if part in c]
    if len(skipped) == len(example.commands):
        pytest.skip("; ".join(sorted(set(skipped))))
    monkeypatch.chdir(workspace.folder)
    monkeypatch.delenv("CORIX_DB", raising=False)
    port = _free_port()
    postgres = _postgres_or_sqlite(example, request)
    servers: list[subprocess.Popen[bytes]] = []
    try:
        for command in example.commands:
            if any(part in command for part in NOT_RUN):
                continue
            background = command.rstrip().endswith("&")
            args = shlex.split(_filled(command.rstrip(" &"), workspace, port, postgres))[1:]
            if background or args[0] == "serve":
                server = subprocess.Popen(
                    [str(CORIX), *args],
                    cwd=workspace.folder,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                servers.append(server)
                _wait_for_port(port, server, timeout_s=60)
                continue
            stdin = ""
            if args[:2] == ["users", "add"] and "--password-stdin" not in args:
                args.append("--password-stdin")  # the example asks for it at a terminal
                stdin = "correct horse battery staple\n"
            code, out, err = invoke(*args, stdin=stdin)
            assert code == 0, f"{example.where}: {command}\n{out}\n{err}"
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
