"""The docs name the tests that check their claims; every such name is a test that exists.

A claim in docs/ or the README backed by ``tests/…/test_x.py::test_name`` is only as good
as that reference: a renamed or deleted test would leave the claim standing unchecked.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DOCUMENTS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]

# A backticked test file, written from tests/ or from a folder inside it, with an
# optional ``::test`` (a function, or a class and its method).
_REFERENCE = re.compile(r"`((?:[\w/]+/)?test_\w+\.py)((?:::\w+)*)`")


def _references() -> list[tuple[str, str, str]]:
    found = []
    for document in DOCUMENTS:
        for match in _REFERENCE.finditer(document.read_text(encoding="utf-8")):
            found.append((document.name, match.group(1), match.group(2)))
    return found


@cache
def _test_files() -> tuple[Path, ...]:
    return tuple(TESTS.rglob("test_*.py"))


def _resolve(written: str) -> list[Path]:
    """The test files a reference can mean: its path read from the checkout's root or from
    tests/, or (when shortened) every file whose path ends with it."""
    exact = [p for p in (ROOT / written, TESTS / written) if p.is_file()]
    if exact:
        return exact
    return [p for p in _test_files() if p.as_posix().endswith("/" + written)]


def _defined(path: Path, names: list[str]) -> bool:
    scope: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    for name in names:
        matches = [
            node
            for node in scope
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == name
        ]
        if not matches:
            return False
        found = matches[0]
        scope = found.body if isinstance(found, ast.ClassDef) else []
    return True


def test_the_docs_name_tests() -> None:
    # The check below means something only while the docs do cite tests.
    assert len(_references()) >= 40


@pytest.mark.parametrize(
    ("document", "written", "names"), _references(), ids=lambda value: str(value)[:80]
)
def test_every_test_the_docs_name_exists(document: str, written: str, names: str) -> None:
    candidates = _resolve(written)
    assert len(candidates) == 1, f"{document}: `{written}` names {len(candidates)} test files"
    wanted = [name for name in names.split("::") if name]
    assert _defined(candidates[0], wanted), f"{document}: `{written}{names}` is not defined"


# A backticked source file (not a test), written from the checkout's root or shortened to
# its last folders: `measurement/sizing/label_plan.py`, `sizing/label_plan.py`, `core.py`.
_SOURCE = re.compile(r"`((?:[\w.-]+/)*(?!test_)\w+\.py)`")
EXAMPLE_FILES = {"aria_dialog_api_team.py"}  # a file the docs tell a user to write


def _source_references() -> list[tuple[str, str]]:
    return [
        (document.name, match.group(1))
        for document in DOCUMENTS
        for match in _SOURCE.finditer(document.read_text(encoding="utf-8"))
        if match.group(1) not in EXAMPLE_FILES
    ]


@cache
def _source_files() -> tuple[str, ...]:
    roots = (ROOT / "src", ROOT / "benchmarks", ROOT / "scripts")
    return tuple("/" + p.relative_to(ROOT).as_posix() for r in roots for p in r.rglob("*.py"))


def test_the_docs_name_source_files() -> None:
    assert len(_source_references()) >= 40


@pytest.mark.parametrize(("document", "written"), _source_references(), ids=str)
def test_every_source_file_the_docs_name_exists(document: str, written: str) -> None:
    """A module moved or renamed (measurement's went into folders) leaves no stale name."""
    assert any(path.endswith("/" + written) for path in _source_files()), (
        f"{document}: `{written}` is no file of src/, benchmarks/ or scripts/"
    )
