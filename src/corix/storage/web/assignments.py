"""Testers' assignments: the slots a series' design planned, the sessions held in them and
the questionnaire answers that finish them.

A human session is stored like any other (:class:`~corix.storage.store_records.NewSession`, the
same columns as a run's), and so are its answers
(:class:`~corix.storage.store_records.NewQuestionnaireAnswer`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields

from sqlalchemy import delete, func, select, update

from corix.domain import EndReason, JsonObject
from corix.storage.clock import utcnow
from corix.storage.database import Database
from corix.storage.orm import ApplicationRow, QuestionnaireResponseRow
from corix.storage.orm_web import AssignmentRow, UserRow
from corix.storage.sessions import (
    SessionEnd,
    add_questionnaire_answers,
    finish_sessions,
    start_sessions,
)
from corix.storage.store_records import NewQuestionnaireAnswer, NewSession
from corix.storage.transactions import Transaction, affected_rows, transaction

__all__ = [
    "AssignmentRecord",
    "Briefing",
    "NewAssignment",
    "add_assignments",
    "answers_of",
    "by_token",
    "delete_assignments",
    "end_session",
    "finish",
    "last_position",
    "named_assignments",
    "of_series",
    "of_user",
    "start_session",
    "status_counts",
    "statuses_of_user",
]


@dataclass(frozen=True, slots=True)
class Briefing:
    """The persona and goal a tester plays in an assignment, drawn from the scenario pack."""

    key: str
    persona: str
    """The persona template's name."""
    template_version: str
    text: str
    """The persona as the tester reads it."""
    parameters: JsonObject
    goal: str
    goal_description: str
    success_criteria: tuple[str, ...]

    def column(self) -> JsonObject:
        """The briefing as its JSON column holds it."""
        return {**asdict(self), "success_criteria": list(self.success_criteria)}

    @classmethod
    def from_column(cls, stored: JsonObject | None) -> Briefing | None:
        if stored is None:
            return None
        found = {field.name: stored[field.name] for field in fields(cls)}
        return cls(**{**found, "success_criteria": tuple(found["success_criteria"])})


@dataclass(frozen=True, slots=True)
class AssignmentRecord:
    """One tester's slot: an application × scenario at the tester's level, and its session."""

    id: int
    token: str
    evaluation_id: str
    user_id: int
    application_id: int
    scenario: str
    level: str
    position: int
    briefing: Briefing | None
    status: str
    session_id: str | None


@dataclass(frozen=True, slots=True)
class NewAssignment:
    token: str
    evaluation_id: str
    user_id: int
    application_id: int
    scenario: str
    level: str
    position: int
    briefing: Briefing | None


def _record(row: AssignmentRow) -> AssignmentRecord:
    return AssignmentRecord(
        id=row.id,
        token=row.token,
        evaluation_id=row.evaluation_id,
        user_id=row.user_id,
        application_id=row.application_id,
        scenario=row.scenario,
        level=row.level,
        position=row.position,
        briefing=Briefing.from_column(row.briefing),
        status=row.status,
        session_id=row.session_id,
    )


# -- a tester's side -----------------------------------------------------------------------


def by_token(tx: Transaction, token: str) -> AssignmentRecord | None:
    row = tx.scalars(select(AssignmentRow).where(AssignmentRow.token == token)).first()
    return None if row is None else _record(row)


def of_user(db: Database, user_id: int) -> list[AssignmentRecord]:
    """A tester's assignments in the order they do them."""
    with transaction(db) as tx:
        rows = tx.scalars(
            select(AssignmentRow)
            .where(AssignmentRow.user_id == user_id)
            .order_by(AssignmentRow.position)
        )
        return [_record(row) for row in rows]


def statuses_of_user(tx: Transaction, user_id: int) -> list[str]:
    return list(tx.scalars(select(AssignmentRow.status).where(AssignmentRow.user_id == user_id)))


def start_session(
    db: Database,
    assignment_id: int,
    *,
    claim: tuple[str, str],
    session: Callable[[AssignmentRecord, str], NewSession],
) -> bool:
    """Open the assignment's session; ``False`` when another request opened it first.

    ``claim`` is the (from, to) status change made first with a conditional update, so of
    two concurrent starts one opens. ``session`` makes the session from the assignment and
    the application's name.
    """
    claimed_from, claimed_to = claim
    with transaction(db) as tx:
        claimed = tx.execute(
            update(AssignmentRow)
            .where(AssignmentRow.id == assignment_id, AssignmentRow.status == claimed_from)
            .values(status=claimed_to)
            .execution_options(synchronize_session=False)
        )
        if affected_rows(claimed) != 1:
            return False
        row = tx.get(AssignmentRow, assignment_id, populate_existing=True)
        assert row is not None
        app = tx.get(ApplicationRow, row.application_id)
        assert app is not None  # enforced by the foreign key
        new = session(_record(row), app.name)
        start_sessions(tx, [new])
        row.session_id = new.id
        return True


def end_session(tx: Transaction, assignment_id: int, session_id: str, status: str) -> None:
    """The tester ended the session: it is complete, and the assignment moves to ``status``."""
    finish_sessions(tx, [SessionEnd(session_id, EndReason.USER_ENDED)])
    tx.execute(
        update(AssignmentRow)
        .where(AssignmentRow.id == assignment_id)
        .values(status=status)
        .execution_options(synchronize_session=False)
    )


def finish(
    db: Database,
    token: str,
    user_id: int,
    *,
    claim: tuple[str, str],
    answers: Callable[[str], Sequence[NewQuestionnaireAnswer]],
) -> bool:
    """Finish the assignment with its questionnaire answers, all or nothing.

    ``claim`` is the (from, to) status change: of two submissions, one stores its answers
    and the other gets ``False``. ``answers`` makes them for the assignment's session.
    """
    claimed_from, claimed_to = claim
    with transaction(db) as tx:
        session_id = tx.execute(
            update(AssignmentRow)
            .where(
                AssignmentRow.token == token,
                AssignmentRow.user_id == user_id,
                AssignmentRow.status == claimed_from,
            )
            .values(status=claimed_to, completed_at=utcnow())
            .returning(AssignmentRow.session_id)
        ).scalar_one_or_none()
        if session_id is None:
            return False
        add_questionnaire_answers(tx, answers(session_id))
        return True


def answers_of(tx: Transaction, session_id: str, respondent: str) -> dict[str, str | None]:
    """Item id → text answer ``respondent`` gave after ``session_id``."""
    rows = tx.execute(
        select(QuestionnaireResponseRow.item_id, QuestionnaireResponseRow.value_text).where(
            QuestionnaireResponseRow.session_id == session_id,
            QuestionnaireResponseRow.respondent == respondent,
        )
    )
    return dict(rows.tuples().all())


# -- the admin's side ----------------------------------------------------------------------


def of_series(
    tx: Transaction, evaluation_id: str, *, level: str | None = None
) -> list[AssignmentRecord]:
    """The series' assignments (of one level, if given)."""
    query = select(AssignmentRow).where(AssignmentRow.evaluation_id == evaluation_id)
    if level is not None:
        query = query.where(AssignmentRow.level == level)
    return [_record(row) for row in tx.scalars(query)]


def delete_assignments(tx: Transaction, assignment_ids: Sequence[int]) -> None:
    tx.execute(delete(AssignmentRow).where(AssignmentRow.id.in_(list(assignment_ids))))


def last_position(tx: Transaction, user_id: int) -> int:
    """The position of the tester's last assignment, in every series (0: none yet)."""
    found = tx.scalar(
        select(func.coalesce(func.max(AssignmentRow.position), 0)).where(
            AssignmentRow.user_id == user_id
        )
    )
    return found or 0


def add_assignments(tx: Transaction, new: Sequence[NewAssignment]) -> None:
    for assignment in new:
        tx.add(
            AssignmentRow(
                token=assignment.token,
                evaluation_id=assignment.evaluation_id,
                user_id=assignment.user_id,
                application_id=assignment.application_id,
                scenario=assignment.scenario,
                level=assignment.level,
                position=assignment.position,
                briefing=None if assignment.briefing is None else assignment.briefing.column(),
            )
        )
    tx.flush()


def named_assignments(
    db: Database, evaluation_id: str, *, by_tester: bool
) -> list[tuple[AssignmentRecord, str, str]]:
    """The series' assignments with their tester's username and application's name, by
    username and position (``by_tester``) or by level, tester id and position."""
    order = (
        (UserRow.username, AssignmentRow.position)
        if by_tester
        else (AssignmentRow.level, AssignmentRow.user_id, AssignmentRow.position)
    )
    with transaction(db) as tx:
        rows = tx.execute(
            select(AssignmentRow, UserRow.username, ApplicationRow.name)
            .join(UserRow, UserRow.id == AssignmentRow.user_id)
            .join(ApplicationRow, ApplicationRow.id == AssignmentRow.application_id)
            .where(AssignmentRow.evaluation_id == evaluation_id)
            .order_by(*order)
        ).tuples()
        return [(_record(row), username, app) for row, username, app in rows]


def status_counts(tx: Transaction, evaluation_id: str) -> dict[str, Counter[str]]:
    """Level → assignment status → count."""
    found: dict[str, Counter[str]] = {}
    for level, status, count in tx.execute(
        select(AssignmentRow.level, AssignmentRow.status, func.count())
        .where(AssignmentRow.evaluation_id == evaluation_id)
        .group_by(AssignmentRow.level, AssignmentRow.status)
    ).tuples():
        found.setdefault(level, Counter())[status] = count
    return found
