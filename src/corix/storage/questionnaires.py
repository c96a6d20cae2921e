"""Stored questionnaire answers: the one reader of their table.

Every read (a session's answers, a report's, an export's, a measurement's whole runs)
goes through :func:`questionnaire_answers`, ``IN`` lists a chunk at a time, and gets the
answers back as they were written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import select

from corix.storage.database import IN_CHUNK, Database, in_chunks
from corix.storage.orm import ApplicationRow, QuestionnaireResponseRow, SessionRow
from corix.storage.store_records import NewQuestionnaireAnswer

__all__ = ["RunQuestionnaireAnswer", "iter_run_questionnaire_answers", "questionnaire_answers"]


def questionnaire_answers(db: Database, session_ids: Sequence[str]) -> list[NewQuestionnaireAnswer]:
    """The questionnaire answers of ``session_ids`` as they were written: who answered,
    whether a simulated user did, how (their provenance) and when; by session, then in
    stored order."""
    found: list[NewQuestionnaireAnswer] = []
    with db.session() as s:
        for chunk in in_chunks(sorted(set(session_ids))):
            rows = s.scalars(
                select(QuestionnaireResponseRow)
                .where(QuestionnaireResponseRow.session_id.in_(chunk))
                .order_by(QuestionnaireResponseRow.session_id, QuestionnaireResponseRow.id)
            )
            found.extend(
                NewQuestionnaireAnswer(
                    session_id=row.session_id,
                    item_id=row.item_id,
                    respondent=row.respondent,
                    simulated=row.simulated,
                    value=row.value_num,
                    text=row.value_text,
                    provenance=row.provenance,
                    created_at=row.created_at,
                )
                for row in rows
            )
    return found


@dataclass(frozen=True, slots=True)
class RunQuestionnaireAnswer:
    """One answer with the facts of its session that measurement groups by."""

    run_id: str
    application: str
    level: str
    scenario: str
    work_key: str | None
    answer: NewQuestionnaireAnswer


def iter_run_questionnaire_answers(
    db: Database, run_ids: Sequence[str]
) -> Iterator[RunQuestionnaireAnswer]:
    """Every answer of the finished sessions of ``run_ids``, by session, in stored order;
    the sessions stream a chunk at a time (flat memory)."""
    sessions = (
        select(
            SessionRow.id,
            SessionRow.run_id,
            ApplicationRow.name,
            SessionRow.level,
            SessionRow.scenario,
            SessionRow.work_key,
        )
        .join(ApplicationRow, ApplicationRow.id == SessionRow.application_id)
        .where(SessionRow.run_id.in_(run_ids), SessionRow.status != "running")
        .order_by(SessionRow.id)
        .execution_options(yield_per=IN_CHUNK)
    )
    with db.session() as s:
        for chunk in s.execute(sessions).partitions():
            facts = {row[0]: row for row in chunk}
            for answer in questionnaire_answers(db, list(facts)):
                _, run_id, application, level, scenario, work_key = facts[answer.session_id]
                yield RunQuestionnaireAnswer(run_id, application, level, scenario, work_key, answer)
