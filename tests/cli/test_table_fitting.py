"""Terminal tables at 80 columns: cells wrap between words, never inside one."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from corix.cli.common import wrapping_table

RUN_ID = "run-20261124-153835-22d6"


def _render(width: int, *rows: tuple[str, ...], headers: tuple[str, ...]) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    table = wrapping_table(*headers)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    with console.capture() as captured:
        console.print(table)
    return captured.get().splitlines()


def test_every_word_stays_whole_at_80_columns() -> None:
    note = "a long note that has to wrap over several lines to fit in its cell " * 2
    lines = _render(
        80,
        (RUN_ID, "demo", "complete", note.strip()),
        headers=("run", "name", "status", "note"),
    )
    assert max(len(line) for line in lines) <= 80
    # The id is never cut: the narrow columns gave way to the wordy one.
    assert any(RUN_ID in line for line in lines)
    words = {word for line in lines for word in line.replace("│", " ").split()}
    assert set(note.split()) <= words


def test_rows_become_blocks_when_the_words_cannot_fit() -> None:
    headers = ("annotator", "application", "harm", "scenario", "level", "rate", "interval")
    row = (
        "reference",
        "assistant-unguarded",
        "guardrail_violation",
        "meal_planner",
        "model_testing",
        "75.8%",
        "67.8%–82.3%",
    )
    lines = _render(60, row, headers=headers)
    assert max(len(line) for line in lines) <= 60
    for header, cell in zip(headers, row, strict=True):
        assert any(line.split() == [header, cell] for line in lines), header
    # Wide enough, the same rows are a table again.
    wide = _render(140, row, headers=headers)
    assert any(all(cell in line for cell in row) for line in wide)


def _printed(width: int, *, wide: bool) -> str:
    console = Console(width=width, color_system=None)
    table = wrapping_table(
        "session", "application", "scenario", "level", optional=("level", "scenario"), wide=wide
    )
    for index in range(3):
        table.add_row(f"{index}" * 32, "assistant-unguarded", "meal_planner", "model_testing")
    with console.capture() as captured:
        console.print(table)
    return captured.get()


def test_a_narrow_terminal_loses_the_optional_columns_not_the_table() -> None:
    """At 80 columns the least valuable columns go (named below), rows stay rows."""
    narrow = _printed(80, wide=False)
    # The last optional column goes first, and no more than the width needs.
    assert "hidden to fit: scenario (--wide shows them)" in narrow
    assert "meal_planner" not in narrow and narrow.count("model_testing") == 3
    rows = [line for line in narrow.splitlines() if "assistant-unguarded" in line]
    assert [f"{index}" * 32 in row for index, row in enumerate(rows)] == [True] * 3
    # --wide keeps every column: as blocks of lines where they cannot all fit.
    wide = _printed(80, wide=True)
    assert "hidden" not in wide and wide.count("meal_planner") == 3
    assert "hidden" not in _printed(160, wide=False)
