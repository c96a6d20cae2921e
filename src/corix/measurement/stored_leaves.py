"""From the stored record to CoRIx leaves: settled annotator answers and questionnaire answers.

Each stored answer becomes one leaf about its dialogue (the session id), tagged with the
session's application, level and scenario and with its source:

* **Annotation** answers come from passes that completed. When an annotator's runs were
  repeated, the repeats are settled first: the stored consensus rows when the runner
  wrote them, else the consensus computed here (majority for words, lower median for
  numbers, as in :mod:`corix.assessment.stability`). Distinct annotators, and distinct
  passes by one annotator, stay separate leaves: disagreements are kept, not voted away.
  A harm pass (category ``harm:<pack>``) answers one question, ``severity``; its leaf is
  named after the category, so severities from different packs never mix.
* **Questionnaire** answers: one leaf per respondent and item.

Only complete sessions of the run count, as everywhere else in corix. Answers stream from
the database in one ordered query per kind, so memory holds the leaves, not the rows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from typing import Any

import numpy as np
from sqlalchemy import ColumnElement, Row, Select, select
from sqlalchemy.orm import Session

from corix.assessment.stability import Value, consensus
from corix.measurement.item_wording import item_wording
from corix.measurement.leaves import LeafSource, LeafTable
from corix.storage import Database
from corix.storage.orm import (
    AnnotationAnswerRow,
    AnnotationConsensusRow,
    AnnotationPassRow,
    ApplicationRow,
    QuestionnaireResponseRow,
    SessionRow,
)

HARM_CATEGORY_PREFIX = "harm:"
_STREAM_BATCH = 5000


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """One settled answer about one dialogue, with where it came from.

    ``respondent`` is the annotator (annotation) or the questionnaire's respondent.
    ``pass_no`` tells apart passes by one annotator (``None`` for a stored consensus and
    for questionnaire answers); ``category`` and ``turn_index`` are ``None`` for
    questionnaire answers. ``work_key`` is the plan's work-item key of the session (``None``
    for a human session), a name that survives reruns. ``value`` is text: numbers are
    written without a trailing ``.0`` (``"7"``, ``"2.5"``), yes/no and choices as stored.
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


def iter_stored_answers(
    db: Database, run_id: str, *, annotators: Collection[str] | None = None
) -> Iterator[StoredAnswer]:
    """Every settled answer of ``run_id``: annotations (optionally only ``annotators``' own),
    then questionnaire answers."""
    with db.session() as s:
        settled = _consensus_owners(s, run_id)
        for row in s.execute(_consensus_query(run_id)).yield_per(_STREAM_BATCH):
            if annotators is None or row.annotator in annotators:
                value = answer_text(row.value_num, row.value_text)
                if value is not None:
                    yield _annotation(row, value, pass_no=None)
        rows = s.execute(_pass_query(run_id)).yield_per(_STREAM_BATCH)
        for key, group in groupby(rows, key=lambda r: (r.session_id, r.category, r.annotator)):
            if key in settled or (annotators is not None and key[2] not in annotators):
                continue
            for pass_no, pass_rows in groupby(group, key=lambda r: r.pass_no):
                yield from _settle_repeats(list(pass_rows), pass_no)
        for row in s.execute(_questionnaire_query(run_id)).yield_per(_STREAM_BATCH):
            value = answer_text(row.value_num, row.value_text)
            if value is not None:
                yield StoredAnswer(
                    session_id=row.session_id,
                    application=row.application,
                    level=row.level,
                    scenario=row.scenario,
                    source=LeafSource.QUESTIONNAIRE,
                    question=row.item_id,
                    value=value,
                    respondent=row.respondent,
                    work_key=row.work_key,
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
        questionnaire = answer.source is LeafSource.QUESTIONNAIRE
        wordings.append(
            item_wording(answer.scenario, answer.level, answer.question) if questionnaire else ""
        )
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
        value=np.array(values, dtype=str),
        origin=origin,
    )


def stored_leaves(
    db: Database, run_id: str, *, annotators: Collection[str] | None = None
) -> LeafTable:
    """The CoRIx leaves of ``run_id``: see the module docstring for what becomes a leaf."""
    return leaves_from_answers(
        iter_stored_answers(db, run_id, annotators=annotators), origin=f"run {run_id}"
    )


def leaf_question(category: str, question_id: str) -> str:
    """The leaf's question: the schema question, or the ``harm:<pack>`` category for severities."""
    return category if category.startswith(HARM_CATEGORY_PREFIX) else question_id


# -- settling repeats -----------------------------------------------------------------------


def _settle_repeats(rows: list[Row[Any]], pass_no: int) -> Iterator[StoredAnswer]:
    """One pass's answers; several repeats of it are settled into one answer per question."""
    if len({row.repeat_no for row in rows}) == 1:
        for row in rows:
            value = answer_text(row.value_num, row.value_text)
            if value is not None:
                yield _annotation(row, value, pass_no=pass_no)
        return
    runs: dict[tuple[str, int | None], list[Row[Any]]] = {}
    for row in rows:
        if row.value_num is not None or row.value_text is not None:
            runs.setdefault((row.question_id, row.turn_index), []).append(row)
    for answers in runs.values():
        numeric = all(row.value_num is not None for row in answers)
        given: list[Value] = [
            float(row.value_num) if numeric else str(row.value_text) for row in answers
        ]
        settled = consensus(given, ordinal=numeric).value
        value = number_text(float(settled)) if numeric else str(settled)
        yield _annotation(answers[0], value, pass_no=pass_no)


def _annotation(row: Row[Any], value: str, *, pass_no: int | None) -> StoredAnswer:
    return StoredAnswer(
        session_id=row.session_id,
        application=row.application,
        level=row.level,
        scenario=row.scenario,
        source=LeafSource.ANNOTATION,
        question=leaf_question(row.category, row.question_id),
        value=value,
        respondent=row.annotator,
        category=row.category,
        turn_index=row.turn_index,
        pass_no=pass_no,
        work_key=row.work_key,
    )


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


# -- queries ------------------------------------------------------------------------------


def _in_run(run_id: str) -> tuple[ColumnElement[bool], ...]:
    return (SessionRow.run_id == run_id, SessionRow.status == "complete")


def _consensus_owners(s: Session, run_id: str) -> set[tuple[str, str, str]]:
    """(session, category, annotator) whose repeats the runner already settled."""
    query = (
        select(
            AnnotationConsensusRow.session_id,
            AnnotationConsensusRow.category,
            AnnotationConsensusRow.annotator,
        )
        .join(SessionRow, SessionRow.id == AnnotationConsensusRow.session_id)
        .where(*_in_run(run_id))
        .distinct()
    )
    return {(row[0], row[1], row[2]) for row in s.execute(query)}


def _consensus_query(run_id: str) -> Select[Any]:
    return (
        select(
            AnnotationConsensusRow.session_id,
            ApplicationRow.name.label("application"),
            SessionRow.level,
            SessionRow.scenario,
            SessionRow.work_key,
            AnnotationConsensusRow.category,
            AnnotationConsensusRow.annotator,
            AnnotationConsensusRow.question_id,
            AnnotationConsensusRow.turn_index,
            AnnotationConsensusRow.value_num,
            AnnotationConsensusRow.value_text,
        )
        .join(SessionRow, SessionRow.id == AnnotationConsensusRow.session_id)
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .where(*_in_run(run_id))
        .order_by(AnnotationConsensusRow.session_id, AnnotationConsensusRow.id)
    )


def _pass_query(run_id: str) -> Select[Any]:
    return (
        select(
            AnnotationPassRow.session_id,
            ApplicationRow.name.label("application"),
            SessionRow.level,
            SessionRow.scenario,
            SessionRow.work_key,
            AnnotationPassRow.category,
            AnnotationPassRow.annotator,
            AnnotationPassRow.pass_no,
            AnnotationPassRow.repeat_no,
            AnnotationAnswerRow.question_id,
            AnnotationAnswerRow.turn_index,
            AnnotationAnswerRow.value_num,
            AnnotationAnswerRow.value_text,
        )
        .join(AnnotationAnswerRow, AnnotationAnswerRow.pass_id == AnnotationPassRow.id)
        .join(SessionRow, SessionRow.id == AnnotationPassRow.session_id)
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .where(*_in_run(run_id), AnnotationPassRow.status == "ok")
        .order_by(
            AnnotationPassRow.session_id,
            AnnotationPassRow.category,
            AnnotationPassRow.annotator,
            AnnotationPassRow.pass_no,
            AnnotationPassRow.repeat_no,
            AnnotationAnswerRow.id,
        )
    )


def _questionnaire_query(run_id: str) -> Select[Any]:
    return (
        select(
            QuestionnaireResponseRow.session_id,
            ApplicationRow.name.label("application"),
            SessionRow.level,
            SessionRow.scenario,
            SessionRow.work_key,
            QuestionnaireResponseRow.respondent,
            QuestionnaireResponseRow.item_id,
            QuestionnaireResponseRow.value_num,
            QuestionnaireResponseRow.value_text,
        )
        .join(SessionRow, SessionRow.id == QuestionnaireResponseRow.session_id)
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .where(*_in_run(run_id))
        .order_by(QuestionnaireResponseRow.session_id, QuestionnaireResponseRow.id)
    )
