"""Bad invocations: one line, exit code 2.

Every case runs ``corix.cli.main.main`` — the console script's own function, with its argv
and standard streams — in this process; a few also run the installed ``corix`` script in a
subprocess, so that nothing between the shell and corix (the entry point, interpreter
start-up, error printing to a real stream) is skipped. One subprocess costs about two
seconds of start-up, which 29 cases would spend again and again on the same path.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_support import invoke

from corix.cli.exit_codes import ExitCode
from corix.storage import Database

CORIX = Path(sys.executable).with_name("corix")

PLAN_WITHOUT_MODEL = """\
name: no-model
applications:
  - name: chat
    spec: "openai:http://127.0.0.1:9/v1"
scenarios: [tv_spoilers]
levels:
  model_testing: {}
"""


def corix(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CORIX), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.fixture(scope="module")
def busy_port() -> Iterator[int]:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


def _write(name: str, content: bytes) -> Callable[[Path], str]:
    def make(directory: Path) -> str:
        (directory / name).write_bytes(content)
        return name

    return make


def _database(directory: Path) -> str:
    url = f"sqlite:///{directory / 'corix.db'}"
    Database(url).dispose()
    return url


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str | Callable[[Path], str], ...]
    says: str  # a fragment of the one-line message


DEEP_YAML = b"name: deep\nx: " + b"[" * 5000 + b"]" * 5000 + b"\n"
LONG_CSV = b"item_id,annotator,value\n1,a," + b"x" * (16 * 1024 * 1024 + 1) + b"\n"
ALIAS_BOMB = b"a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + b"".join(
    f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]\n".encode() for n in range(1, 9)
)
DEEP_JSON = b"[" * 100_000 + b"]" * 100_000 + b"\n"
NAN_LABELS = b'{"item_id": "1", "annotator": "a", "value": NaN}\n'

CASES = [
    Case("no command", (), "'corix' needs a command"),
    Case("group without command", ("runs",), "'corix runs' needs a command"),
    Case("missing argument", ("runs", "show"), "Missing argument"),
    Case("unknown option", ("run", "--bogus"), "No such option: --bogus"),
    Case("option without value", ("annotate", "r", "--annotator"), "requires an argument"),
    Case("bad value", ("annotate", "r", "--passes", "0"), "Invalid value"),
    Case("not a number", ("mock-server", "--port", "eighty"), "Input should be a valid integer"),
    Case("plan and resume", ("run",), "give either a PLAN file or --resume RUN"),
    Case(
        "openai spec without model",
        ("run", _write("plan.yaml", PLAN_WITHOUT_MODEL.encode())),
        "plan.yaml:4: application 'chat': the spec 'openai:http://127.0.0.1:9/v1' is not "
        "valid: model",
    ),
    Case(
        "app check of an openai spec without model",
        ("app", "check", "openai:http://127.0.0.1:9/v1"),
        "the spec 'openai:http://127.0.0.1:9/v1' is not valid: model",
    ),
    Case(
        "deeply nested --auth",
        ("app", "check", "demo:guarded", "--auth", "[" * 5000 + "]" * 5000),
        "--auth is not valid JSON: nested too deeply",
    ),
    Case(
        "deeply nested JSON Lines",
        ("agreement", _write("labels.jsonl", DEEP_JSON), "--a", "a", "--b", "b"),
        "labels.jsonl:1",
    ),
    Case("malformed db url", ("runs", "list", "--db", "nonsense://x"), "malformed database URL"),
    Case(
        "unreachable db",
        ("runs", "list", "--db", "postgresql://postgres@127.0.0.1:9/corix"),
        "cannot open the database",
    ),
    Case(
        "postgres driver missing",
        ("runs", "list", "--db", "postgresql+pg8000://postgres@127.0.0.1/corix"),
        "driver 'pg8000' is not installed",
    ),
    Case("unknown run", ("runs", "show", "run-nope", "--db", _database), "no run 'run-nope'"),
    Case("port out of range", ("mock-server", "--port", "70000"), "less than or equal to 65535"),
    Case(
        "fault rates above one",
        ("mock-server", "--port", "0", "--fail-429", "0.7", "--fail-500", "0.7"),
        "add up to more than 1",
    ),
    Case("unknown executor", ("run", "--resume", "r", "--executor", "spark"), "executor 'spark'"),
    Case("ray option alone", ("run", "--resume", "r", "--ray-workers", "2"), "need --executor ray"),
    Case(
        "response cache on Ray",
        (
            "annotate",
            "r",
            "--annotator",
            "llm",
            "--endpoint",
            "mock",
            "--executor",
            "ray",
            "--cache",
            "replies.db",
        ),
        "cannot be shared by Ray workers",
    ),
    Case("non-UTF-8 plan", ("run", _write("latin.yaml", b"name: caf\xe9\n")), "not UTF-8 text"),
    Case("very deep YAML", ("run", _write("deep.yaml", DEEP_YAML)), "nested deeper than"),
    Case("very deep tree", ("tree", "show", _write("t.yaml", DEEP_YAML)), "nested deeper than"),
    Case("alias bomb", ("run", _write("bomb.yaml", ALIAS_BOMB)), "aliases expand to more than"),
    Case(
        "NaN label",
        ("agreement", _write("labels.jsonl", NAN_LABELS), "--a", "a", "--b", "b"),
        "NaN is not a valid value",
    ),
    Case(
        "over-long CSV field",
        ("agreement", _write("labels.csv", LONG_CSV), "--a", "a", "--b", "b"),
        "at most 16,777,216 are read",
    ),
]


def _assert_one_line_usage_error(code: int, stdout: str, stderr: str, says: str) -> None:
    assert code == ExitCode.USAGE, (code, stderr)
    assert "Traceback" not in stderr + stdout
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    assert says in lines[0]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_bad_invocation_gets_one_line_and_exit_code_2(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = [arg(tmp_path) if callable(arg) else arg for arg in case.args]
    _assert_one_line_usage_error(*invoke(*args), case.says)


ENTRY_POINT_CASES = [case for case in CASES if case.id in {"no command", "non-UTF-8 plan"}]


@pytest.mark.parametrize("case", ENTRY_POINT_CASES, ids=[case.id for case in ENTRY_POINT_CASES])
def test_the_installed_script_reports_the_same_line(case: Case, tmp_path: Path) -> None:
    args = [arg(tmp_path) if callable(arg) else arg for arg in case.args]
    result = corix(*args, cwd=tmp_path)
    _assert_one_line_usage_error(result.returncode, result.stdout, result.stderr, case.says)


def test_mock_server_on_a_busy_port(busy_port: int, tmp_path: Path) -> None:
    result = corix("mock-server", "--port", str(busy_port), cwd=tmp_path)
    assert result.returncode == ExitCode.USAGE
    assert f"error: cannot listen on 127.0.0.1:{busy_port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = corix("--debug", "runs", "list", "--db", "nonsense://x", cwd=tmp_path)
    assert result.returncode == ExitCode.USAGE
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("error: malformed database URL")
