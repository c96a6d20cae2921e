"""`corix annotations show | import`: stored passes, and human labels brought in."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from corix.cli.common import (
    DbOption,
    JsonOption,
    RunArgument,
    console,
    database,
    print_json,
    wrapping_table,
)

if TYPE_CHECKING:
    from corix.storage import StoredConsensus, StoredPass

annotations_app = typer.Typer(
    rich_markup_mode=None, help="Inspect and import annotations.", no_args_is_help=True
)


def _pass_label(stored: StoredPass) -> Text:
    label = f"{stored.annotator} ({stored.annotator_kind}) pass {stored.pass_no}"
    if stored.repeat_no:
        label += f" run {stored.repeat_no}"
    return Text(label)


def _shown(value: str | float | None) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else value


def _answers_table(
    title: str, passes: list[StoredPass], turn: int | None, *, with_category: bool
) -> Table | None:
    table = wrapping_table(
        "annotator",
        *(("category",) if with_category else ()),
        "question",
        "value",
        "reasoning",
        title=title,
        keys=("annotator", "category"),
    )
    rows = 0
    for stored in passes:
        category = (Text(stored.category),) if with_category else ()
        if not stored.ok and turn is None:
            table.add_row(
                _pass_label(stored), *category, Text("—"), Text("failed"), Text(stored.error or "")
            )
            rows += 1
            continue
        for answer in stored.answers:
            if answer.turn_index != turn:
                continue
            table.add_row(
                _pass_label(stored),
                *category,
                Text(answer.question_id),
                Text(_shown(answer.value)),
                Text(answer.reasoning or ""),
            )
            rows += 1
    return table if rows else None


@annotations_app.command("show")
def annotations_show(
    session: Annotated[str, typer.Argument(help="Session id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Each turn with its annotations beside it, pass by pass, then the dialogue-level ones."""
    from corix.storage import load_consensus, load_passes, load_session

    with database(db) as database_:
        record = load_session(database_, session)
        passes = load_passes(database_, session_ids=[session])
        consensus_rows = load_consensus(database_, session_ids=[session])
    if as_json:
        print_json(
            {
                "session": record.model_dump(mode="json"),
                "passes": [{**vars(p), "answers": [vars(a) for a in p.answers]} for p in passes],
                "consensus": [vars(row) for row in consensus_rows],
            }
        )
        return
    console.print(
        Text(f"session {record.id} — {record.application}, {record.scenario}, {record.level}")
    )
    for position, turn in enumerate(record.turns):
        console.rule(f"turn {position}")
        console.print(Text("user: ", style="bold") + Text(turn.user_text))
        reply = turn.response_text if turn.error is None else f"[failed] {turn.error}"
        console.print(Text("application: ", style="bold") + Text(reply or ""))
        table = _answers_table("", passes, position, with_category=True)
        if table is not None:
            console.print(table)
    console.rule("dialogue")
    by_category: defaultdict[str, list[StoredPass]] = defaultdict(list)
    for stored in passes:
        by_category[stored.category].append(stored)
    for category, category_passes in sorted(by_category.items()):
        table = _answers_table(category, category_passes, None, with_category=False)
        if table is not None:
            console.print(table)
    if not passes:
        console.print("no annotations yet")
    if consensus_rows:
        _print_consensus(consensus_rows)


def _print_consensus(consensus_rows: Sequence[StoredConsensus]) -> None:
    """The consensus of repeated runs, one row per annotator, question and turn."""
    table = wrapping_table(
        "annotator",
        "category",
        "question",
        "turn",
        "consensus",
        "method",
        "runs",
        "flip rate",
        title="consensus of repeated runs",
        keys=("annotator", "category"),
    )
    for row in consensus_rows:
        table.add_row(
            Text(row.annotator),
            Text(row.category),
            Text(row.question_id),
            "" if row.turn_index is None else str(row.turn_index),
            Text(str(row.value)),
            row.method,
            str(row.n_runs),
            f"{row.flip_rate:.2f}",
        )
    console.print(table)


@annotations_app.command("import")
def annotations_import(
    run: RunArgument,
    labels: Annotated[Path, typer.Argument(help="CSV or JSONL file of human labels.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import human labels as passes (all checked first; stored in one transaction)."""
    from corix.assessment import import_labels

    with database(db) as database_:
        summary = import_labels(database_, run, labels)
    if as_json:
        print_json(summary.model_dump(mode="json"))
        return
    console.print(
        Text(
            f"imported {summary.passes} passes ({summary.answers} answers) by "
            f"{', '.join(summary.annotators) or 'nobody'} into {summary.run_id}"
        )
    )
