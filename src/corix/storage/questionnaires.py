"""Stored questionnaire answers of whole runs, streamed in one ordered query (flat memory)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, select

from corix.storage.database import Database
from corix.storage.orm import ApplicationRow, QuestionnaireResponseRow, SessionRow

__all__ = ["RunQuestionnaireAnswer", "iter_run_questionnaire_answers"]

_STREAM_BATCH = 5000


@dataclass(frozen=True, slots=True)
class RunQuestionnaireAnswer:
    """One answer to one questionnaire item, with the session facts measurement groups by."""

    session_id: str
    run_id: str
    application: str
    level: str
    scenario: str
    work_key: str | None
    respondent: str
    item_id: str
    value: float | None
    text: str | None


def iter_run_questionnaire_answers(
    db: Database, run_ids: Sequence[str]
) -> Iterator[RunQuestionnaireAnswer]:
    """Every answer of the finished sessions of ``run_ids``, by session, in stored order."""
    with db.session() as s:
        for row in s.execute(_query(run_ids)).yield_per(_STREAM_BATCH):
            yield RunQuestionnaireAnswer(*row)


def _query(run_ids: Sequence[str]) -> Select[Any]:
    return (
        select(
            QuestionnaireResponseRow.session_id,
            SessionRow.run_id,
            ApplicationRow.name,
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
        .where(SessionRow.run_id.in_(run_ids), SessionRow.status != "running")
        .order_by(QuestionnaireResponseRow.session_id, QuestionnaireResponseRow.id)
    )
