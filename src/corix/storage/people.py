"""Who the people behind a record are: usernames and questionnaire respondents.

Exports name people by username; a release replaces those names with pseudonyms, so both
read them from here.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from corix.storage.database import Database, in_chunks
from corix.storage.orm import SessionRow
from corix.storage.orm_web import UserRow
from corix.storage.store_records import NewQuestionnaireAnswer

__all__ = [
    "PERSON_RESPONDENT_PREFIX",
    "respondent_name",
    "session_testers",
    "usernames",
]

PERSON_RESPONDENT_PREFIX = "user:"
"""A person's questionnaire answers name them ``user:<id>`` (their web account)."""


def usernames(db: Database) -> dict[int, str]:
    """Every web account's username by id (a few hundred rows at most)."""
    with db.session() as s:
        return {row.id: row.username for row in s.execute(select(UserRow.id, UserRow.username))}


def session_testers(db: Database, session_ids: Sequence[str]) -> dict[str, int]:
    """The web account that tested each of ``session_ids`` (sessions without one are left
    out)."""
    found: dict[str, int] = {}
    with db.session() as s:
        for chunk in in_chunks(session_ids):
            query = select(SessionRow.id, SessionRow.tester_id).where(
                SessionRow.id.in_(chunk), SessionRow.tester_id.is_not(None)
            )
            found.update({row.id: row.tester_id for row in s.execute(query)})
    return found


def respondent_name(answer: NewQuestionnaireAnswer, names: dict[int, str]) -> str:
    """Who gave ``answer``: a person by username, a simulated user as stored."""
    respondent, simulated = answer.respondent, answer.simulated
    if simulated or not respondent.startswith(PERSON_RESPONDENT_PREFIX):
        return respondent
    number = respondent.removeprefix(PERSON_RESPONDENT_PREFIX)
    return names.get(int(number), respondent) if number.isdigit() else respondent
