"""`corix sessions …`: a run's sessions and one session's transcript."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from corix.cli.common import (
    DbOption,
    JsonOption,
    WideOption,
    console,
    database,
    print_json,
    wrapping_table,
)
from corix.cli.measure_options import SettlingOption, SpecOption, measurement_spec

if TYPE_CHECKING:
    from corix.measurement import ListedDialogue, Measurement


sessions_app = typer.Typer(rich_markup_mode=None, help="Inspect sessions.", no_args_is_help=True)


ApplicationOption = Annotated[str | None, typer.Option(help="Only this application.")]
ScenarioOption = Annotated[str | None, typer.Option(help="Only this scenario.")]
LevelOption = Annotated[str | None, typer.Option(help="Only this level.")]
FailedOption = Annotated[
    bool, typer.Option("--failed", help="Only dialogues the application never answered.")
]
ViolationOption = Annotated[
    bool, typer.Option("--violation", help="Only dialogues some annotator source flags.")
]


@sessions_app.command("list")
def sessions_list(
    run: Annotated[str, typer.Argument(help="Run id.")],
    application: ApplicationOption = None,
    scenario: ScenarioOption = None,
    level: LevelOption = None,
    failed: FailedOption = False,
    violation: ViolationOption = False,
    spec: SpecOption = None,
    settling: SettlingOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """A run's sessions, filtered; violations are the measurement core's settled verdicts
    under the specification in force (printed first)."""
    from corix.measurement import DialogueFilter, list_dialogues, measure
    from corix.storage import get_run

    chosen = DialogueFilter(
        application=application,
        scenario=scenario,
        level=level,
        failed=failed,
        violation=violation,
    )
    in_force, source = measurement_spec(spec, settling=settling)
    with database(db) as database_:
        get_run(database_, run)
        measurement = measure(database_, [run], in_force, source=source)
    listed = list_dialogues(measurement, chosen)
    if as_json:
        print_json(
            [
                {
                    "id": item.dialogue.session_id,
                    "application": item.dialogue.application,
                    "scenario": item.dialogue.scenario,
                    "level": item.dialogue.level,
                    "not_measurable": item.dialogue.not_measurable,
                    "violation": item.violation,
                }
                for item in listed
            ]
        )
        return
    _print_sessions(measurement, listed, wide=wide)


def _print_sessions(
    measurement: Measurement, listed: Sequence[ListedDialogue], *, wide: bool
) -> None:
    """The listed sessions as a table, under the specification's headline."""
    console.print(Text(measurement.headline(), style="dim"))
    table = wrapping_table(
        "session", "application", "scenario", "level", "violation", "not measurable",
        optional=("level", "scenario", "not measurable"),
        wide=wide,
    )  # fmt: skip
    for item in listed:
        dialogue = item.dialogue
        verdicts = ", ".join(f"{s} {v:g}" for s, v in sorted(item.violation.items()))
        table.add_row(
            Text(dialogue.session_id),
            Text(dialogue.application),
            Text(dialogue.scenario),
            Text(dialogue.level),
            Text(verdicts or "—"),
            Text(dialogue.not_measurable or ""),
        )
    console.print(table)
    console.print(f"{len(listed)} of {len(measurement.dialogues)} sessions")


@sessions_app.command("show")
def sessions_show(
    session: Annotated[str, typer.Argument(help="Session id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A readable transcript of one session."""
    from corix.report import render_transcript
    from corix.storage import load_session, questionnaire_answers

    with database(db) as database_:
        record = load_session(database_, session)
        answers = [answer.as_answer() for answer in questionnaire_answers(database_, [session])]
    if as_json:
        print_json(
            {**record.model_dump(mode="json"), "questionnaire": [a.model_dump() for a in answers]}
        )
        return
    typer.echo(render_transcript(record, answers))
