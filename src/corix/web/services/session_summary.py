"""What a tester sees when a session is over: their own account of it, nothing about the
application (blinding holds here as everywhere a tester looks).

Red teamers get back what they reported achieving, after NIST's kiosk ("You uncovered X
vulnerabilities in Y turns"), but from their own questionnaire, not from annotation that
has not happened yet. Field testers get a thank-you with their progress.
"""

from __future__ import annotations

from dataclasses import dataclass

from corix.domain import Level
from corix.scenarios import ItemKind, QuestionnaireItem, resolve_pack
from corix.storage import Database
from corix.storage.web import assignments, transaction
from corix.storage.web.dialogues import turn_count
from corix.web.services.accounts import SignedInUser
from corix.web.services.service_errors import Conflict, Forbidden, NotFound
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
    with transaction(db) as tx:
        row = assignments.by_token(tx, token)
        if row is None:
            raise NotFound("there is no such session")
        if row.user_id != user.id:
            raise Forbidden("this session belongs to someone else")
        if row.status != Status.DONE or row.session_id is None:
            raise Conflict("the summary follows the questionnaire")
        messages = turn_count(tx, row.session_id)
        answers = assignments.answers_of(tx, row.session_id, respondent_of(user))
        statuses = assignments.statuses_of_user(tx, user.id)
        level = Level(row.level)
        pack = resolve_pack(row.scenario)
        reported = []
        if level is Level.RED_TEAMING:
            reported = [
                ReportedAnswer(item.text, _as_chosen(item, answer))
                for item in pack.questionnaires.red_teaming
                if item.kind in REPORTED_KINDS and (answer := answers.get(item.id))
            ]
        return SessionSummary(
            position=row.position,
            scenario_title=pack.title,
            level=level,
            messages=messages,
            reported=reported,
            completed=statuses.count(Status.DONE),
            assigned=len(statuses),
        )


def _as_chosen(item: QuestionnaireItem, answer: str) -> str:
    """A choice as the form offered it ("Partly"); the tester's own words untouched."""
    return answer.replace("_", " ").capitalize() if item.kind is ItemKind.CHOICE else answer
