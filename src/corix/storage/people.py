"""Who the people behind a record are: usernames and questionnaire respondents.

Exports name people by username; a release replaces those names with pseudonyms, so both
read them from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from corix.storage.database import Database
from corix.storage.orm import QuestionnaireResponseRow, SessionRow
from corix.storage.orm_web import UserRow

__all__ = [
    "PERSON_RESPONDENT_PREFIX",
    "RespondentAnswer",
    "answers_by_session",
    "session_testers",
    "usernames",
]

PERSON_RESPONDENT_PREFIX = "user:"
"""A person's questionnaire answers name them ``user:<id>`` (their web account)."""


@dataclass(frozen=True, slots=True)
class RespondentAnswer:
    """One questionnaire answer and who gave it (a person's username, or a simulated user)."""

    item_id: str
    value: float | None
    text: str | None
    respondent: str
    simulated: bool


def usernames(db: Database) -> dict[int, str]:
    """Every web account's username by id (a few hundred rows at most)."""
    with db.session() as s:
        return {row.id: row.username for row in s.execute(select(UserRow.id, UserRow.username))}


def session_testers(db: Database, session_ids: Sequence[str]) -> dict[str, int]:
    """The web account that tested each of ``session_ids`` (sessions without one are left
    out)."""
    query = select(SessionRow.id, SessionRow.tester_id).where(
        SessionRow.id.in_(list(session_ids)), SessionRow.tester_id.is_not(None)
    )
    with db.session() as s:
        return {row.id: row.tester_id for row in s.execute(query)}


def answers_by_session(
    db: Database, session_ids: Sequence[str], names: dict[int, str]
) -> dict[str, list[RespondentAnswer]]:
    """The questionnaire answers of ``session_ids`` in one query, people named by username."""
    found: dict[str, list[RespondentAnswer]] = {}
    query = (
        select(QuestionnaireResponseRow)
        .where(QuestionnaireResponseRow.session_id.in_(list(session_ids)))
        .order_by(QuestionnaireResponseRow.id)
    )
    with db.session() as s:
        for row in s.scalars(query):
            found.setdefault(row.session_id, []).append(
                RespondentAnswer(
                    item_id=row.item_id,
                    value=row.value_num,
                    text=row.value_text,
                    respondent=_respondent_name(row.respondent, row.simulated, names),
                    simulated=row.simulated,
                )
            )
    return found


def _respondent_name(respondent: str, simulated: bool, names: dict[int, str]) -> str:
    if simulated or not respondent.startswith(PERSON_RESPONDENT_PREFIX):
        return respondent
    number = respondent.removeprefix(PERSON_RESPONDENT_PREFIX)
    return names.get(int(number), respondent) if number.isdigit() else respondent
