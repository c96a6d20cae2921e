"""A user's mistakes through ``corix``'s real entry point: exit 2, one line, no traceback.

Each case runs ``corix.cli.main.main`` (what the console script calls) in this process
with ``sys.argv`` set, standard input not a terminal, and the working directory a fresh
folder holding one small run and one imported run. Exit code 1 is kept for corix's bugs;
every case here is the user's input, files, machine or network.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cli_support import invoke

from corix.cli.exit_codes import ExitCode

PLAN = """\
name: small
applications:
  - {name: guarded, spec: "demo:guarded"}
scenarios: [tv_spoilers]
levels:
  red_teaming: {sessions: 2, max_turns: 2}
"""

DIALOGUES = (
    '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'
)

PLAN_WITH_BOGUS_OPTION = """\
name: bogus
applications:
  - {name: chat, spec: "openai:http://127.0.0.1:9/v1?model=m&max_retriez=0"}
scenarios: [tv_spoilers]
levels:
  model_testing: {}
"""


@dataclass
class Workspace:
    folder: Path
    run: str
    imported: str
    busy_port: int


def _last_run(folder: Path) -> str:
    code, out, err = invoke("runs", "list", "--json")
    assert code == 0, err
    return str(json.loads(out)[-1]["id"])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    folder = tmp_path_factory.mktemp("user-errors")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.delenv("CORIX_DB", raising=False)
        (folder / "plan.yaml").write_text(PLAN, encoding="utf-8")
        assert invoke("run", "plan.yaml")[0] == 0
        run = _last_run(folder)
        (folder / "dialogues.jsonl").write_text(DIALOGUES, encoding="utf-8")
        code, _, err = invoke(
            "import", "dialogues.jsonl", "--application", "a", "--scenario", "tv_spoilers",
            "--level", "field_testing",
        )  # fmt: skip
        assert code == 0, err
        imported = _last_run(folder)
        with socket.socket() as held:
            held.bind(("127.0.0.1", 0))
            held.listen()
            yield Workspace(folder, run, imported, held.getsockname()[1])


@dataclass(frozen=True)
class Case:
    id: str
    args: Callable[[Workspace], tuple[str, ...]]
    says: str
    """A fragment of the one line on stderr."""
    files: dict[str, bytes] = field(default_factory=dict)
    """Files to write into the workspace first."""
    code: int = ExitCode.USAGE


def case(id: str, *args: str, says: str, files: dict[str, bytes] | None = None) -> Case:
    """A case whose arguments may name ``{run}``, ``{imported}``, ``{port}``, ``{dir}``."""

    def fill(ws: Workspace) -> tuple[str, ...]:
        values = {"run": ws.run, "imported": ws.imported, "port": ws.busy_port, "dir": ws.folder}
        return tuple(arg.format(**values) for arg in args)

    return Case(id, fill, says, files or {})


BINARY = bytes(range(256)) * 4

CASES = [
    # The cases of issue 24.
    case("export csv onto a file", "export", "{run}", "--format", "csv", "--output",
         "taken.txt", says="a file is in the way where a folder is wanted",
         files={"taken.txt": b"x"}),
    case("export jsonl onto a folder", "export", "{run}", "--output", "{dir}",
         says="it is a folder; give a file path"),
    case("export into a missing folder", "export", "{run}", "--output", "/proc/nope/x.jsonl",
         says="cannot use '/proc/nope/x.jsonl': no such file or folder"),
    case("report onto a file", "report", "{run}", "--out", "taken.txt",
         says="a file is in the way", files={"taken.txt": b"x"}),
    case("binary leaves", "tree", "score", "--tree", "aria_pilot", "--leaves", "bin.csv",
         says="bin.csv is not UTF-8 text", files={"bin.csv": BINARY}),
    case("demo concurrency 0", "demo", "--concurrency", "0",
         says="Invalid value for '--concurrency'"),
    case("resume an imported run", "run", "--resume", "{imported}",
         says="was imported, not made from a plan: there is nothing to resume"),
    case("malformed ray address", "annotate", "{run}", "--executor", "ray", "--ray-address",
         "not-an-address", says="--ray-address 'not-an-address' is not a Ray address"),
    case("unreachable application", "app", "check",
         "openai:http://127.0.0.1:9/v1?model=x&max_retries=0",
         says="the application failed at 'respond': model call to endpoint"),
    case("unknown adapter option", "app", "check", "openai:http://127.0.0.1:9/v1?model=mock&bogus_opt=1",
         says="unknown option 'bogus_opt' of the 'openai' adapter"),
    case("unknown option of a python application", "app", "check",
         "python:support.apps:EchoApp?delay_mz=5", says="Did you mean 'delay_ms'?"),
    case("serve on a busy port", "serve", "--port", "{port}",
         says="cannot listen on 127.0.0.1:{port}"),
    case("reading a missing database", "runs", "list", "--db", "sqlite:///{dir}/none/x.db",
         says="no corix database at"),
    case("delete without a terminal", "runs", "delete", "{run}", says="use --yes"),
    case("password without a terminal", "users", "add", "bob", "--role", "admin",
         says="use --password-stdin"),
    case("unknown level filter", "sessions", "list", "{run}", "--level", "nonsense",
         says="unknown level 'nonsense'"),
    # Twenty-odd more.
    case("show a session that is not there", "sessions", "show", "nope", says="nope"),
    case("unknown export format", "export", "{run}", "--format", "xml",
         says="unknown format 'xml'"),
    case("export an unknown series", "export", "--series", "nope",
         says="no evaluation series named 'nope'"),
    case("import a missing file", "import", "missing.jsonl", says="missing.jsonl"),
    case("import a folder", "import", "{dir}", says="{dir}"),
    case("import a binary file", "import", "bin.jsonl", says="bin.jsonl",
         files={"bin.jsonl": BINARY}),
    case("agreement on a missing file", "agreement", "none.csv", "--a", "x", "--b", "y",
         says="none.csv"),
    case("defects with a missing spec", "defects", "{run}", "--spec", "none.yaml",
         says="none.yaml"),
    case("defects with an unknown settling rule", "defects", "{run}", "--settling", "nonsense",
         says="nonsense"),
    case("gate without a threshold", "gate", "{run}", "--max", "nonsense", says="nonsense"),
    case("gate with a word for a number", "gate", "{run}", "--max", "guardrail_violation=abc",
         says="abc"),
    case("unknown tree", "tree", "show", "no_such_tree", says="no_such_tree"),
    case("missing leaves", "tree", "score", "--tree", "aria_pilot", "--leaves", "none.csv",
         says="none.csv"),
    case("leaves without their columns", "tree", "score", "--tree", "aria_pilot", "--leaves",
         "bad.csv", says="header lacks column", files={"bad.csv": b"a,b\n1,2\n"}),
    case("unknown pack", "packs", "show", "nope", says="unknown scenario pack 'nope'"),
    case("validate a missing pack", "packs", "validate", "{dir}/nope", says="nope"),
    case("unknown annotator", "annotate", "{run}", "--annotator", "nope",
         says="unknown annotator 'nope'"),
    case("annotate an unknown run", "annotate", "run-nope", says="no run 'run-nope'"),
    case("annotations of an unknown session", "annotations", "show", "nope", says="nope"),
    case("import labels from a missing file", "annotations", "import", "{run}", "none.csv",
         says="none.csv"),
    case("release onto a file", "release", "{run}", "--out", "taken.txt",
         says="--out 'taken.txt' is a file", files={"taken.txt": b"x"}),
    case("missing plan", "run", "none.yaml", says="none.yaml"),
    case("a folder as plan", "run", "{dir}", says="{dir}"),
    case("personas of an unknown run", "personas", "run-nope", says="no run 'run-nope'"),
    case("compare with an unknown run", "runs", "compare", "{run}", "run-nope",
         says="no run 'run-nope'"),
    case("negative mock latency", "mock-server", "--latency-ms", "-1",
         says="Invalid value for '--latency-ms'"),
    case("cancel a finished run", "runs", "cancel", "{run}", says="only a running"),
    case("a misspelt structured-output mode", "annotate", "{run}", "--annotator", "llm",
         "--endpoint", "mock", "--structured-output", "jsn_object",
         says="Did you mean 'json_object'?"),
    case("a judge URL that is not one", "annotate", "{run}", "--annotator", "llm",
         "--endpoint-url", "URL", "--model", "M",
         says="--endpoint-url 'URL' is not an http(s) URL"),
    case("a judge endpoint with spec options", "annotate", "{run}", "--annotator", "llm",
         "--endpoint", "local:m.gguf?n_ctx=4096", says="give them as flags"),
    case("model processes for a server", "annotate", "{run}", "--annotator", "llm",
         "--endpoint-url", "http://127.0.0.1:9/v1", "--model", "M", "--processes", "2",
         says="processes is for 'local' endpoints"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_users_mistake_exits_2_with_one_line(
    case: Case, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace.folder)
    monkeypatch.delenv("CORIX_DB", raising=False)
    for name, data in case.files.items():
        (workspace.folder / name).write_bytes(data)
    code, out, err = invoke(*case.args(workspace))
    assert code == case.code, (code, err)
    assert "Traceback" not in out + err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "internal error" not in lines[0]
    expected = case.says.format(port=workspace.busy_port, dir=workspace.folder)
    assert expected.lower() in " ".join(lines[0].split()).lower()


def test_reading_never_creates_a_database(workspace: Workspace, tmp_path: Path) -> None:
    target = tmp_path / "none" / "x.db"
    for argv in (("runs", "list"), ("runs", "show", "r"), ("users", "list")):
        code, _, _ = invoke(*argv, "--db", f"sqlite:///{target}")
        assert code == ExitCode.USAGE
    assert not target.parent.exists()


def test_preflight_names_a_misspelt_option_among_every_problem(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace.folder)
    (workspace.folder / "bogus.yaml").write_text(PLAN_WITH_BOGUS_OPTION, encoding="utf-8")
    code, _, err = invoke("run", "--check", "bogus.yaml")
    assert code == ExitCode.USAGE
    lines = err.splitlines()
    assert all(line.startswith("error: bogus.yaml:3: ") for line in lines), err
    assert any("unknown option 'max_retriez'" in line for line in lines), err
    assert any("Did you mean 'max_retries'?" in line for line in lines), err


THREE_MISTAKES = """\
name: three
seed: soon
concurency: 5
applications:
  - {name: a, spec: "demo:guarded"}
scenarios: [tv_spoilers]
levels:
  red_teaming: {sessions: -1}
"""


def test_every_schema_error_of_a_plan_is_a_line_with_its_place(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace.folder)
    (workspace.folder / "three.yaml").write_text(THREE_MISTAKES, encoding="utf-8")
    code, _, err = invoke("run", "--check", "three.yaml")
    assert code == ExitCode.USAGE
    assert [line.split(",")[0] for line in err.splitlines()] == [
        "error: three.yaml:2",
        "error: three.yaml:3",
        "error: three.yaml:8",
    ]
    assert "did you mean 'concurrency'?" in err
