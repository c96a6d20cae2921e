"""Leaf records: one settled answer about one dialogue, and the stored questionnaire answers.

A :class:`StoredAnswer` is what becomes one CoRIx leaf: an annotator's settled label
(made by the measurement core, :mod:`corix.measurement.core`) or a questionnaire answer,
tagged with its dialogue's application, level and scenario. A harm pass (category
``harm:<pack>``) answers one question, ``severity``; its leaf is named after the category,
so severities from different packs never mix. Questionnaire answers stream from the
database (:mod:`corix.storage.questionnaires`), so memory holds the leaves, not the rows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from corix.measurement.questionnaires import item_wordings
from corix.measurement.trees import LeafSource, LeafTable
from corix.storage import Database, iter_run_questionnaire_answers, run_packs

HARM_CATEGORY_PREFIX = "harm:"


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """One settled answer about one dialogue, with where it came from.

    ``respondent`` is the annotator (annotation) or the questionnaire's respondent.
    ``pass_no`` tells apart passes by one annotator (``None`` for a stored consensus and
    for questionnaire answers); ``category`` and ``turn_index`` are ``None`` for
    questionnaire answers. ``work_key`` is the plan's work-item key of the session (``None``
    for a human session), a name that survives reruns. ``value`` is text: numbers are
    written without a trailing ``.0`` (``"7"``, ``"2.5"``), yes/no and choices as stored.
    ``wording`` is a questionnaire item's text in the run's pack (``""`` when unknown:
    such answers pool by id alone). ``tester`` names who produced the dialogue (``""``
    when unknown), for the bootstrap's tester stage.
    """

    session_id: str
    application: str
    level: str
    scenario: str
    source: LeafSource
    question: str
    value: str
    respondent: str
    category: str | None = None
    turn_index: int | None = None
    pass_no: int | None = None
    work_key: str | None = None
    wording: str = ""
    tester: str = ""


def iter_questionnaire_answers(
    db: Database, run_ids: Sequence[str], *, sessions: Collection[str] | None = None
) -> Iterator[StoredAnswer]:
    """Every questionnaire answer of ``run_ids`` (only ``sessions``' when given)."""
    wordings = {key: item_wordings(record.pack()) for key, record in run_packs(db, run_ids).items()}
    for row in iter_run_questionnaire_answers(db, run_ids):
        answer = row.answer
        if sessions is not None and answer.session_id not in sessions:
            continue
        value = answer_text(answer.value, answer.text)
        if value is not None:
            yield StoredAnswer(
                session_id=answer.session_id,
                application=row.application,
                level=row.level,
                scenario=row.scenario,
                source=LeafSource.QUESTIONNAIRE,
                question=answer.item_id,
                value=value,
                respondent=answer.respondent,
                work_key=row.work_key,
                wording=wordings.get((row.run_id, row.scenario), {}).get(
                    (row.level, answer.item_id), ""
                ),
            )


def leaves_from_answers(answers: Iterable[StoredAnswer], *, origin: str = "leaves") -> LeafTable:
    """Build a :class:`LeafTable` column by column from stored answers."""
    columns: dict[str, list[str]] = {
        name: []
        for name in ("application", "level", "source", "question", "dialogue", "scenario", "by")
    }
    # A plan's work-item key names a dialogue across reruns; a session id changes.
    keys: list[str] = []
    wordings: list[str] = []
    testers: list[str] = []
    values: list[str] = []
    for answer in answers:
        columns["application"].append(answer.application)
        columns["level"].append(answer.level)
        columns["source"].append(answer.source.value)
        columns["question"].append(answer.question)
        columns["dialogue"].append(answer.session_id)
        columns["scenario"].append(answer.scenario)
        # Who answered: an annotator's repeats and turns reduce to one value per dialogue,
        # and questionnaire statistics average each tester's answers.
        columns["by"].append(answer.respondent)
        keys.append(answer.work_key or "")
        wordings.append(answer.wording)
        testers.append(answer.tester)
        values.append(answer.value)
    return LeafTable.from_columns(
        application=np.array(columns["application"], dtype=str),
        level=np.array(columns["level"], dtype=str),
        source=np.array(columns["source"], dtype=str),
        question=np.array(columns["question"], dtype=str),
        dialogue_id=np.array(columns["dialogue"], dtype=str),
        scenario=np.array(columns["scenario"], dtype=str),
        annotator=np.array(columns["by"], dtype=str),
        dialogue_key=np.array(keys, dtype=str),
        wording=np.array(wordings, dtype=str),
        tester=np.array(testers, dtype=str),
        value=np.array(values, dtype=str),
        origin=origin,
    )


def leaf_question(category: str, question_id: str) -> str:
    """The leaf's question: the schema question, or the ``harm:<pack>`` category for severities."""
    return category if category.startswith(HARM_CATEGORY_PREFIX) else question_id


def answer_text(number: float | None, text: str | None) -> str | None:
    """A stored answer as leaf text (``None`` when empty): ``7.0`` → ``"7"``, words stripped."""
    if number is not None:
        return number_text(number)
    if text is None or not text.strip():
        return None
    return text.strip()


def number_text(number: float) -> str:
    """A number as leaf text: whole numbers without ``.0``."""
    return str(int(number)) if number.is_integer() else repr(number)
