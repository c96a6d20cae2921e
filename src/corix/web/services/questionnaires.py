"""Reading a submitted post-session questionnaire against the scenario pack's items."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from corix.scenarios import ItemKind, QuestionnaireItem
from corix.web.services.service_errors import InputError

LIKERT_POINTS = (1, 2, 3, 4, 5)
QuestionnaireValue = float | str


def field_name(item: QuestionnaireItem) -> str:
    return f"q:{item.id}"


def parse_questionnaire(
    items: Sequence[QuestionnaireItem], form: Mapping[str, str], *, max_text_chars: int
) -> dict[str, QuestionnaireValue]:
    """Every item's answer in stored form (Likert points as floats, the rest as text).

    Every item is required. All problems are reported at once, keyed by item id, so the
    form can be shown again with each one marked and nothing is stored half-done.
    """
    values: dict[str, QuestionnaireValue] = {}
    problems: dict[str, str] = {}
    for item in items:
        raw = (form.get(field_name(item)) or "").strip()
        if not raw:
            problems[item.id] = "please answer this question"
            continue
        if item.kind is ItemKind.LIKERT5:
            if raw not in {str(point) for point in LIKERT_POINTS}:
                problems[item.id] = "choose a point from 1 to 5"
            else:
                values[item.id] = float(raw)
        elif item.kind is ItemKind.CHOICE:
            if raw not in item.options:
                problems[item.id] = "choose one of the options"
            else:
                values[item.id] = raw
        elif len(raw) > max_text_chars:
            problems[item.id] = f"at most {max_text_chars} characters (this has {len(raw)})"
        else:
            values[item.id] = raw
    if problems:
        raise InputError("some answers are missing or not valid", problems)
    return values
