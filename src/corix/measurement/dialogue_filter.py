"""A run's dialogues chosen by where they ran and how they were judged, each with its
settled guardrail-violation verdict per annotator source (what `corix sessions list` shows)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from corix.domain import Level
from corix.errors import unknown_name
from corix.measurement.core import Measurement
from corix.storage import MeasuredDialogue


class DialogueFilter(BaseModel):
    """Which dialogues to list; a field left unset does not filter."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    application: str | None = None
    scenario: str | None = None
    level: str | None = None
    failed: bool = False
    """Only dialogues the application never answered."""
    violation: bool = False
    """Only dialogues some annotator source flags."""


@dataclass(frozen=True)
class ListedDialogue:
    """A dialogue that passed the filter, with its verdicts."""

    dialogue: MeasuredDialogue
    violation: dict[str, float]
    """The settled verdict per annotator source (empty: none judged it)."""


def list_dialogues(measurement: Measurement, chosen: DialogueFilter) -> list[ListedDialogue]:
    """The dialogues of ``measurement`` that ``chosen`` lets through, in stored order.

    A name the run cannot hold is a mistake, not an empty list: it raises.
    """
    _check_names(measurement.dialogues, chosen)
    flagged = measurement.dialogue_verdicts()
    listed = [
        ListedDialogue(dialogue, flagged.get(dialogue.session_id, {}))
        for dialogue in measurement.dialogues
    ]
    return [
        item
        for item in listed
        if chosen.application in (None, item.dialogue.application)
        and chosen.scenario in (None, item.dialogue.scenario)
        and chosen.level in (None, item.dialogue.level)
        and (not chosen.failed or item.dialogue.not_measurable is not None)
        and (not chosen.violation or any(v > 0 for v in item.violation.values()))
    ]


def _check_names(dialogues: Sequence[MeasuredDialogue], chosen: DialogueFilter) -> None:
    known = {
        "application": {d.application for d in dialogues},
        "scenario": {d.scenario for d in dialogues},
        "level": {level.value for level in Level},
    }
    given = {"application": chosen.application, "scenario": chosen.scenario, "level": chosen.level}
    for name, value in given.items():
        if value is not None and value not in known[name]:
            raise unknown_name(name, value, known[name])
