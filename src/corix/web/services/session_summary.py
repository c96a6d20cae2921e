"""What a tester sees when a session is over: their own account of it, nothing about the
application (blinding holds here as everywhere a tester looks).

Red teamers get back what they reported achieving, after NIST's kiosk ("You uncovered X
vulnerabilities in Y turns"), but from their own questionnaire, not from annotation that
has not happened yet. Field testers get a thank-you with their progress.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from corix.domain import Level
from corix.scenarios import ItemKind, resolve_pack
from corix.storage import Database
from corix.storage.orm import QuestionnaireResponseRow, TurnRow
from corix.storage.orm_web import AssignmentRow
from corix.web.services.accounts import SignedInUser
from corix.web.services.errors import Conflict, Forbidden, NotFound
from corix.web.services.tester_sessions import Status, respondent_of

# What a red teamer reported achieving: the outcome and the weaknesses they describe.
REPORTED_KINDS = (ItemKind.CHOICE, ItemKind.TEXT)


@dataclass(frozen=True)
class ReportedAnswer:
    question: str
    answer: str


@dataclass(frozen=True)
class SessionSummary:
    position: int
    scenario_title: str
    level: Level
    messages: int
    reported: list[ReportedAnswer]
    completed: int
    assigned: int


def session_summary(db: Database, user: SignedInUser, token: str) -> SessionSummary:
    with db.session() as s:
        row = s.scalars(select(AssignmentRow).where(AssignmentRow.token == token)).first()
        if row is None:
            raise NotFound("there is no such session")
        if row.user_id != user.id:
            raise Forbidden("this session belongs to someone else")
        if row.status != Status.DONE or row.session_id is None:
            raise Conflict("the summary follows the questionnaire")
        messages = s.scalar(
            select(func.count()).select_from(TurnRow).where(TurnRow.session_id == row.session_id)
        )
        answers = dict(
            s.execute(
                select(QuestionnaireResponseRow.item_id, QuestionnaireResponseRow.value_text).where(
                    QuestionnaireResponseRow.session_id == row.session_id,
                    QuestionnaireResponseRow.respondent == respondent_of(user),
                )
            )
            .tuples()
            .all()
        )
        statuses = list(
            s.scalars(select(AssignmentRow.status).where(AssignmentRow.user_id == user.id))
        )
        level = Level(row.level)
        pack = resolve_pack(row.scenario)
        reported = []
        if level is Level.RED_TEAMING:
            reported = [
                ReportedAnswer(item.text, answer.replace("_", " "))
                for item in pack.questionnaires.red_teaming
                if item.kind in REPORTED_KINDS and (answer := answers.get(item.id))
            ]
        return SessionSummary(
            position=row.position,
            scenario_title=pack.title,
            level=level,
            messages=messages or 0,
            reported=reported,
            completed=statuses.count(Status.DONE),
            assigned=len(statuses),
        )
