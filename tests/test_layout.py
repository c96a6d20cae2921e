"""The tests mirror the source: a folder per corix package, so a change to a package has
its tests in one place (``support`` holds helpers shared by several folders)."""

from __future__ import annotations

import re
from importlib import import_module
from pathlib import Path

import pytest

from corix import execution
from support.function_length import long_functions

TESTS = Path(__file__).resolve().parent
PACKAGES = TESTS.parent / "src" / "corix"


def _folders(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}


def test_every_test_folder_is_named_after_a_corix_package() -> None:
    packages = {name for name in _folders(PACKAGES) if (PACKAGES / name / "__init__.py").exists()}
    assert _folders(TESTS) - {"support"} <= packages


# Issue 28 narrowed these surfaces (from 112, 56 and 35 names); issue 39 pinned every
# package's, after removing the names no other package used. `scripts/surfaces.py` shows
# who uses each name. A new export raises the ceiling here, on purpose and in review.
# corix.measurement 57: `Compared`, the rows `compare_measurements` returns (runs compare
# and the results home format them).
SURFACE_CEILINGS = {
    "apps": 12,
    "assessment": 24,
    "cli": 0,  # the `corix` command; other packages import nothing from it
    "config": 18,
    "domain": 48,
    # Issue 39: +1 OwnedResources (the exit stack the annotation runner shares with runs);
    # −5 Plan, PlanFile, ApplicationEntry, LevelSettings, load_plan_file (now in corix.domain).
    "execution": 25,
    "levels": 11,
    "llm": 37,
    # +2 (issue 38): SimulationGap and simulation_gap_per_cell, for `corix validity sim`.
    # +1 (issue 39): NodeDocument, a scored node as the report and `tree score --json` write it.
    "measurement": 60,
    "release": 5,
    "report": 38,
    "scenarios": 28,
    "storage": 96,
    "web": 9,
}


def test_every_package_has_a_surface_ceiling() -> None:
    packages = {path.parent.name for path in PACKAGES.glob("*/__init__.py")}
    assert packages == set(SURFACE_CEILINGS)


@pytest.mark.parametrize("package", sorted(SURFACE_CEILINGS))
def test_public_surfaces_stay_narrow(package: str) -> None:
    exported = getattr(import_module(f"corix.{package}"), "__all__", ())
    assert len(exported) <= SURFACE_CEILINGS[package], f"corix.{package} exports more names"


def test_no_function_in_execution_is_over_60_lines() -> None:
    """Issue 39: a run's steps stay short enough to read (``_execute_plan`` was 167 lines,
    its resources owned nowhere in particular)."""
    files = sorted(Path(execution.__file__).parent.rglob("*.py"))
    assert len(files) > 10  # the package was found
    long = [f for path in files for f in long_functions(path.read_text(), path.name)]
    assert long == []


# Issue 39: records that cross layers are typed; a bare `dict[str, Any]` hides a structure
# corix owns, and `JsonObject` / `JsonSchema` (corix.domain) name the JSON that is free-form
# on purpose (wire payloads, JSON Schemas, columns stored as given). Both are counted over
# src/corix as text; raising a ceiling is a reviewed decision, said in the commit.
BARE_JSON_CEILING = 187
"""Literal `dict[str, Any]`: left in packages not yet typed, and in corix.config, which sits
below corix.domain and cannot name its aliases."""
JSON_ALIAS_CEILING = 74
"""Uses of `JsonObject` and `JsonSchema`, their definitions and imports included."""


def _source_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in PACKAGES.rglob("*.py"))


def test_untyped_json_does_not_spread() -> None:
    text = _source_text()
    bare = text.count("dict[str, Any]")
    aliases = len(re.findall(r"\bJson(?:Object|Schema)\b", text))
    assert bare <= BARE_JSON_CEILING, f"{bare} `dict[str, Any]` in src/corix: type the new one"
    assert aliases <= JSON_ALIAS_CEILING, (
        f"{aliases} uses of JsonObject/JsonSchema: is it free-form?"
    )
