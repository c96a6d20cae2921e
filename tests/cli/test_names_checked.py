"""A name typed wrong is bad input (exit 2, a did-you-mean, the valid names), never a
gate failure; an option that means nothing without another is refused; the errors read
as sentences (issue 37, item 3)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import invoke

from corix.cli.exit_codes import ExitCode
from corix.storage import Database
from support.run_builder import write_tiny_run


@pytest.fixture
async def tiny_url(sqlite_db: Database) -> str:
    await write_tiny_run(sqlite_db)
    return sqlite_db.url


def _line(err: str) -> str:
    return " ".join(err.split())


def test_a_misspelt_gate_harm_is_bad_input_not_a_failed_gate(tiny_url: str) -> None:
    code, _, err = invoke("gate", "run-tiny", "--max", "guardrail_violaton=0.2", "--db", tiny_url)
    assert code == 2
    assert "unknown harm 'guardrail_violaton'. Did you mean 'guardrail_violation'?" in _line(err)
    assert "Known: " in err and "guardrail_violation" in err.split("Known: ")[1]


def test_a_misspelt_annotator_gets_a_did_you_mean(tiny_url: str) -> None:
    code, _, err = invoke("defects", "run-tiny", "--annotator", "refrence", "--db", tiny_url)
    assert code == 2
    assert "Did you mean 'reference'?" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "plan.yaml", "--wave", "5"], "--wave only applies with --until"),
        (["run", "plan.yaml", "--annotator", "x"], "--annotator only applies with --until"),
        (["defects", "run-tiny", "--reference", "llm"], "--reference only applies with"),
    ],
)
def test_an_option_that_needs_another_is_refused(
    args: list[str], message: str, tmp_path: Path
) -> None:
    code, _, err = invoke(*args, "--db", f"sqlite:///{tmp_path / 'none.db'}")
    assert code == 2
    assert message in err
    assert not (tmp_path / "none.db").exists()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://u@localhost/x", "SQLite or PostgreSQL, not 'mysql'"),
        ("postgres://127.0.0.1/x", "write postgresql://…, not postgres://…"),
    ],
)
def test_an_unsupported_database_kind_says_so(url: str, message: str) -> None:
    code, _, err = invoke("runs", "list", "--db", url)
    assert code == 2
    assert message in err and "driver" not in err


def test_an_endpoint_without_a_scheme_is_refused_before_any_call() -> None:
    code, _, err = invoke("app", "check", "openai:127.0.0.1:8000/v1?model=x")
    assert code == 2
    assert "the endpoint '127.0.0.1:8000/v1' needs http:// or https://" in _line(err)
    assert "Value error" not in err and "retr" not in err


def test_an_unknown_session_in_imported_labels_is_a_sentence(tiny_url: str, tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "session_id,annotator,category,question_id,value\nnope,alice,risk_assessment,x,yes\n",
        encoding="utf-8",
    )
    code, _, err = invoke("annotations", "import", "run-tiny", str(labels), "--db", tiny_url)
    assert code == 2
    assert "(2, " not in err
    assert f"error: {labels}:2: session 'nope' is not a complete session of run run-tiny" in err


def _read_only(path: Path) -> None:
    """Make ``path`` unwritable, even to root (the immutable flag) where the tests run as it."""
    path.chmod(0o444 if path.is_file() else 0o555)
    if os.geteuid() == 0 and subprocess.run(["chattr", "+i", str(path)], check=False).returncode:
        pytest.skip("root writes anything unless chattr +i is allowed")


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "unwritable"
    folder.mkdir()
    yield folder
    for path in (folder, folder / "corix.db"):
        if path.exists():
            if os.geteuid() == 0:
                subprocess.run(["chattr", "-i", str(path)], check=False)
            path.chmod(0o755)


@pytest.mark.parametrize(
    "argv",
    [
        ["annotate", "run-tiny", "--retry-failed"],
        ["users", "add", "bob", "--role", "admin", "--password-stdin"],
    ],
)
def test_a_read_only_database_is_named_in_one_line(argv: list[str], unwritable: Path) -> None:
    path = unwritable / "corix.db"
    db = Database(f"sqlite:///{path}")
    asyncio.run(write_tiny_run(db))
    db.dispose()
    _read_only(path)
    code, _, err = invoke(*argv, "--db", f"sqlite:///{path}", stdin="correct horse battery\n")
    assert code == ExitCode.STORAGE, err
    assert err.splitlines() == [
        f"error: the database file '{path}' takes no writes: attempt to write a readonly database"
    ]


def test_a_database_that_cannot_be_made_is_named(unwritable: Path, tmp_path: Path) -> None:
    _read_only(unwritable)
    path, plan = unwritable / "corix.db", tmp_path / "plan.yaml"
    invoke("init", str(plan))
    code, _, err = invoke("run", str(plan), "--db", f"sqlite:///{path}")
    assert code == 2
    assert err.startswith(f"error: cannot open the database file '{path}': ")
