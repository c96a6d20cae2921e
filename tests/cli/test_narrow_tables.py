"""Every table command at 80 columns: rows stay rows (columns of least value left out and
named, or keys lifted into headings), never one block of lines per row; --wide shows all."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import invoke
from rich.console import RenderResult

from corix.cli import common
from corix.storage import Database
from support.run_builder import write_synthetic_run

# Names as long as real ones: with them every one of these tables was blocks at 80 columns.
APPLICATIONS = ("assistant-unguarded", "assistant-guarded", "assistant-agent")
PLAN = """\
name: narrow
applications:
  - {name: assistant-unguarded, spec: "demo:unguarded"}
  - {name: assistant-guarded, spec: "demo:guarded"}
scenarios: [tv_spoilers, meal_planner]
levels:
  model_testing: {repeats: 1}
  red_teaming: {sessions: 3, max_turns: 2}
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    folder = tmp_path_factory.mktemp("narrow")
    db = Database(f"sqlite:///{folder / 'corix.db'}")
    first, second = (
        asyncio.run(
            write_synthetic_run(
                db, run_id=run_id, applications=APPLICATIONS, seed=seed, sessions_per_cell=1
            )
        )
        for seed, run_id in enumerate(("run-20261129-050941-d0bd", "run-20261129-055556-eefd"))
    )
    (folder / "plan.yaml").write_text(PLAN, encoding="utf-8")
    yield db.url, first, second
    db.dispose()


@pytest.fixture
def blocks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The titles of tables printed as one block per row (none, if all goes well)."""
    printed: list[str] = []
    print_blocks = common.FittingTable._blocks

    def record(table: common.FittingTable) -> RenderResult:
        printed.append(str(table.columns[0].header))
        yield from print_blocks(table)

    monkeypatch.setattr(common.FittingTable, "_blocks", record)
    monkeypatch.setattr(common.console, "_width", 80)
    return printed


def _narrow_then_wide(blocks: list[str], *argv: str) -> tuple[str, str]:
    code, narrow, err = invoke(*argv)
    assert code == 0, err
    assert blocks == [], f"{argv[0]}: rows printed as blocks at 80 columns"
    table_lines = [line for line in narrow.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and max(len(line) for line in table_lines) <= 80
    code, wide, err = invoke(*argv, "--wide")  # every column, as blocks where they must be
    assert code == 0, err
    blocks.clear()
    return narrow, wide


def _hidden(narrow: str) -> list[str]:
    (line,) = [line for line in narrow.splitlines() if line.startswith("hidden to fit: ")]
    return line.removeprefix("hidden to fit: ").removesuffix(" (--wide shows them)").split(", ")


def test_defects_lift_keys_into_headings_and_drop_counts(
    runs: tuple[str, str, str], blocks: list[str]
) -> None:
    db, run, _ = runs
    narrow, wide = _narrow_then_wide(blocks, "defects", run, "--db", db)
    assert "harm: guardrail_violation · application: assistant-unguarded" in narrow
    assert "┃ scenario" in narrow  # the cells under their headings
    hidden = _hidden(narrow)
    assert hidden and set(hidden) <= {"testers", "not measurable", "failed", "ties", "resolved"}
    assert "hidden to fit" not in wide
    assert all(header in wide for header in hidden)


def test_runs_list_and_compare_fit(runs: tuple[str, str, str], blocks: list[str]) -> None:
    db, first, second = runs
    narrow, wide = _narrow_then_wide(blocks, "runs", "list", "--db", db)
    assert first in narrow and second in narrow and "┃ run" in narrow
    assert all(header in wide for header in _hidden(narrow))
    narrow, wide = _narrow_then_wide(blocks, "runs", "compare", first, second, "--db", db)
    assert f"A: {first}, B: {second}" in narrow
    assert "┃ what" in narrow and "assistant-unguarded" in narrow
    assert "overlap" in wide


def test_agreement_keeps_the_scores_of_its_kind_of_label(
    runs: tuple[str, str, str], blocks: list[str]
) -> None:
    db, run, _ = runs
    argv = ("agreement", "--run", run, "--a", "reference", "--b", "llm:mock", "--db", db)
    narrow, wide = _narrow_then_wide(blocks, *argv)
    assert "┃ question" in narrow
    for hidden in _hidden(narrow):
        assert hidden in wide


def test_annotate_and_plan_size_fit(
    runs: tuple[str, str, str], blocks: list[str], tmp_path: Path
) -> None:
    db, run, _ = runs
    narrow, wide = _narrow_then_wide(blocks, "annotate", run, "--db", db)
    assert "┃ target" in narrow
    assert all(header in wide for header in _hidden(narrow))
    plan = Path(db.removeprefix("sqlite:///")).parent / "plan.yaml"
    code, narrow, err = invoke("plan", "size", str(plan), "--width", "0.1")
    assert code == 0, err
    assert blocks == []
    assert "application: assistant-unguarded · scenario: tv_spoilers" in narrow
