"""The tests mirror the source: a folder per corix package, so a change to a package has
its tests in one place (``support`` holds helpers shared by several folders)."""

from __future__ import annotations

import re
import sys
from importlib import import_module
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from typing import Any

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
    "apps": 11,
    "assessment": 24,
    "cli": 0,  # the `corix` command; other packages import nothing from it
    "config": 18,
    # Issue 39: Plan and its parts, the typed sequential summary and the JSON aliases.
    "domain": 66,
    # Issue 39: +1 OwnedResources (the exit stack the annotation runner shares with runs);
    # −5 Plan, PlanFile, ApplicationEntry, LevelSettings, load_plan_file (now in corix.domain),
    # −3 names no other package used. +1 (issue 35): run_stoppable, asyncio.run that SIGTERM
    # stops with SIGINT ignored.
    "execution": 23,
    "levels": 8,
    "llm": 33,
    # +2 (issue 38): SimulationGap and simulation_gap_per_cell, for `corix validity sim`.
    # +1 (issue 39): NodeDocument, a scored node as the report and `tree score --json` write it.
    "measurement": 60,
    "release": 5,
    "report": 38,
    "scenarios": 28,
    # +1 (issue 36): SchemaUpgradeError, Alembic's refusal to upgrade without importing it.
    # +2 (issue 36): count_completed_work and RunTotals, so a run's end counts its work in
    # the database and its totals once.
    "storage": 99,
    "web": 9,
}


def test_every_package_has_a_surface_ceiling() -> None:
    packages = {path.parent.name for path in PACKAGES.glob("*/__init__.py")}
    assert packages == set(SURFACE_CEILINGS)


@pytest.mark.parametrize("package", sorted(SURFACE_CEILINGS))
def test_public_surfaces_stay_narrow(package: str) -> None:
    exported = getattr(import_module(f"corix.{package}"), "__all__", ())
    assert len(exported) <= SURFACE_CEILINGS[package], f"corix.{package} exports more names"


# Exported although no other corix package imports them, each for a reason a user meets.
UNUSED_BUT_PUBLIC = {
    ("domain", "ContentPart"): "the type of Message.content's parts",
    ("domain", "StepKind"): "the type of StepView.kind",
    ("domain", "OutdatedPlan"): "one of RunPlan's kinds, which RunRecord.plan holds",
    ("llm", "MockModel"): "the deterministic model plugin writers and tests script",
    ("llm", "Transport"): "the protocol a custom model transport implements",
    ("llm", "ScriptedTransport"): "a transport that replays scripted replies, for tests",
}


def test_a_name_no_other_package_imports_is_not_exported() -> None:
    """docs/architecture.md, "Public surfaces": a name only its own package (or the tests)
    uses is imported from its module, not exported."""
    unused = {(surface.package, name) for surface in _surfaces() for name in surface.used_by(0)}
    assert unused == set(UNUSED_BUT_PUBLIC)


def _surfaces() -> list[Any]:
    spec = spec_from_file_location("surfaces", TESTS.parent / "scripts" / "surfaces.py")
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    found: list[Any] = module.surfaces()
    return found


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
BARE_JSON_CEILING = 7
"""Literal `dict[str, Any]`: the aliases' own definitions, storage's `Columns` (a row's
values for a Core insert), frozen migrations, and corix.config, which sits below
corix.domain and cannot name the aliases. (Issue 39 started at 248.)"""
JSON_ALIAS_CEILING = 282
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
