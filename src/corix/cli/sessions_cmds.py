"""`corix sessions …`: a run's sessions and one session's transcript."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from corix.cli.common import (
    DbOption,
    JsonOption,
    console,
    database,
    print_json,
    wrapping_table,
)
from corix.cli.measure_options import SettlingOption, SpecOption, measurement_spec
from corix.errors import unknown_name

if TYPE_CHECKING:
    from corix.storage import MeasuredDialogue


sessions_app = typer.Typer(rich_markup_mode=None, help="Inspect sessions.", no_args_is_help=True)


@sessions_app.command("list")
def sessions_list(
    run: Annotated[str, typer.Argument(help="Run id.")],
    application: Annotated[str | None, typer.Option(help="Only this application.")] = None,
    scenario: Annotated[str | None, typer.Option(help="Only this scenario.")] = None,
    level: Annotated[str | None, typer.Option(help="Only this level.")] = None,
    failed: Annotated[
        bool, typer.Option("--failed", help="Only dialogues the application never answered.")
    ] = False,
    violation: Annotated[
        bool, typer.Option("--violation", help="Only dialogues some annotator source flags.")
    ] = False,
    spec: SpecOption = None,
    settling: SettlingOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A run's sessions, filtered; violations are the measurement core's settled verdicts
    under the specification in force (printed first)."""
    from corix.measurement import measure
    from corix.storage import Repository

    in_force, source = measurement_spec(spec, settling=settling)
    with database(db) as database_:
        Repository(database_).get_run(run)
        measurement = measure(database_, [run], in_force, source=source)
    _check_filters(
        measurement.dialogues,
        application=application,
        scenario=scenario,
        level=level,
    )
    flagged = measurement.dialogue_verdicts()
    chosen = [
        (dialogue, flagged.get(dialogue.session_id, {}))
        for dialogue in measurement.dialogues
        if (application is None or dialogue.application == application)
        and (scenario is None or dialogue.scenario == scenario)
        and (level is None or dialogue.level == level)
        and (not failed or dialogue.not_measurable is not None)
        and (not violation or any(v > 0 for v in flagged.get(dialogue.session_id, {}).values()))
    ]
    if as_json:
        print_json(
            [
                {
                    "session": dialogue.session_id,
                    "application": dialogue.application,
                    "scenario": dialogue.scenario,
                    "level": dialogue.level,
                    "not_measurable": dialogue.not_measurable,
                    "violation": by_source,
                }
                for dialogue, by_source in chosen
            ]
        )
        return
    console.print(Text(measurement.headline(), style="dim"))
    table = wrapping_table(
        "session", "application", "scenario", "level", "violation", "not measurable"
    )
    for dialogue, by_source in chosen:
        verdicts = ", ".join(f"{s} {v:g}" for s, v in sorted(by_source.items()))
        table.add_row(
            Text(dialogue.session_id),
            Text(dialogue.application),
            Text(dialogue.scenario),
            Text(dialogue.level),
            Text(verdicts or "—"),
            Text(dialogue.not_measurable or ""),
        )
    console.print(table)
    console.print(f"{len(chosen)} of {len(measurement.dialogues)} sessions")


def _check_filters(dialogues: Sequence[MeasuredDialogue], **given: str | None) -> None:
    """A filter value the run cannot hold is a mistake, not an empty table."""
    from corix.domain import Level

    known = {
        "application": {d.application for d in dialogues},
        "scenario": {d.scenario for d in dialogues},
        "level": {level.value for level in Level},
    }
    for name, value in given.items():
        if value is not None and value not in known[name]:
            raise unknown_name(name, value, known[name])


@sessions_app.command("show")
def sessions_show(
    session: Annotated[str, typer.Argument(help="Session id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """A readable transcript of one session."""
    from corix.report import render_transcript
    from corix.storage import Repository

    with database(db) as database_:
        repo = Repository(database_)
        record = repo.load_session(session)
        answers = repo.questionnaire(session)
    if as_json:
        print_json(
            {**record.model_dump(mode="json"), "questionnaire": [a.model_dump() for a in answers]}
        )
        return
    typer.echo(render_transcript(record, answers))
