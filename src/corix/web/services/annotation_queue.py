"""The annotation queue: K passes per dialogue and category, by K different people.

A dialogue of an evaluation series enters a category's queue once it is complete and the
admin's selection takes it (:mod:`.annotation_selection`: by default every human session,
never an automated run unasked); the
categories gated on a violation also wait until a human risk-assessment pass records
one (any pass: disagreements are kept, so a violation one annotator saw is characterized
rather than voted away). Nobody is offered a dialogue they tested themselves or one they
already had in that category, skipped ones included.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sqlalchemy import and_, exists, func, or_, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import Exists

from corix.assessment import AnnotationSchema, Answer, Category
from corix.assessment.annotators import HUMAN_ANNOTATOR_PREFIX
from corix.storage import Database
from corix.storage.annotations import add_pass
from corix.storage.orm import (
    AnnotationAnswerRow,
    AnnotationPassRow,
    EvaluationRow,
    RunRow,
    SessionRow,
)
from corix.storage.orm_web import AnnotationTaskRow, AnnotatorQueueRow
from corix.storage.records import NewPass, StoredAnswer
from corix.web.security import new_token
from corix.web.services._sql import lock_for_write
from corix.web.services.accounts import SignedInUser
from corix.web.services.annotation_selection import selected_for_humans
from corix.web.services.clock import as_utc, utcnow
from corix.web.services.dialogues import BlindDialogue, blind_dialogue
from corix.web.services.errors import Conflict, Forbidden, NotFound
from corix.web.services.evaluations import evaluation_settings
from corix.web.services.qualification import Qualification

HUMAN = "human"


class TaskStatus:
    OPEN = "open"
    DONE = "done"
    SKIPPED = "skipped"


COUNTED = (TaskStatus.OPEN, TaskStatus.DONE)


def annotator_name(user: SignedInUser) -> str:
    return f"{HUMAN_ANNOTATOR_PREFIX}{user.username}"


@dataclass(frozen=True)
class QueueView:
    id: int
    evaluation: str
    category: Category
    available: int
    done_by_me: int
    open_token: str | None


@dataclass(frozen=True)
class TaskView:
    token: str
    queue_id: int
    category: Category
    status: str
    dialogue: BlindDialogue


class AnnotationQueue:
    def __init__(
        self, db: Database, schema: AnnotationSchema, qualification: Qualification
    ) -> None:
        self._db = db
        self._schema = schema
        self._qualification = qualification

    # -- queues --------------------------------------------------------------------------
    def queues(self, user: SignedInUser) -> list[QueueView]:
        with self._db.session() as s:
            rows = s.execute(
                select(AnnotatorQueueRow, EvaluationRow.name)
                .join(EvaluationRow, EvaluationRow.id == AnnotatorQueueRow.evaluation_id)
                .where(AnnotatorQueueRow.user_id == user.id)
            ).all()
            order = {c.id: c.order for c in self._schema.categories}
            views = []
            for queue, evaluation in sorted(
                rows, key=lambda r: (r[1], order.get(r[0].category, 99))
            ):
                category = self._schema.category(queue.category)
                open_token = _open_task(s, user, queue.evaluation_id, queue.category)
                done = s.scalar(
                    select(func.count())
                    .select_from(AnnotationTaskRow)
                    .where(
                        AnnotationTaskRow.user_id == user.id,
                        AnnotationTaskRow.evaluation_id == queue.evaluation_id,
                        AnnotationTaskRow.category == queue.category,
                        AnnotationTaskRow.status == TaskStatus.DONE,
                    )
                )
                available = len(self._candidates(s, queue.evaluation_id, queue.category, user))
                views.append(
                    QueueView(queue.id, evaluation, category, available, done or 0, open_token)
                )
            return views

    def claim_next(self, user: SignedInUser, queue_id: int) -> str | None:
        """The token of the annotator's next task in a queue, or ``None`` when it is empty.

        An open task is handed back first, so a refresh or a second tab never claims two.
        Real dialogues are shown only to annotators who passed the qualification test.
        Claims in one series are serialized, so racing annotators never exceed K passes.
        """
        if not self._qualification.is_qualified(user):
            raise Forbidden("please pass the qualification test before annotating")
        with self._db.session() as s:
            queue = self._own_queue(s, user, queue_id)
            evaluation_id, category = queue.evaluation_id, queue.category
        with self._db.session() as s:
            lock_for_write(s, evaluation_id)
            open_token = _open_task(s, user, evaluation_id, category)
            if open_token is not None:
                return open_token
            candidates = self._candidates(s, evaluation_id, category, user)
            if not candidates:
                return None
            session_id = candidates[0]
            pass_no = (
                s.scalar(
                    select(func.max(AnnotationTaskRow.pass_no)).where(
                        AnnotationTaskRow.session_id == session_id,
                        AnnotationTaskRow.category == category,
                    )
                )
                or 0
            ) + 1
            token = new_token()
            s.add(
                AnnotationTaskRow(
                    token=token,
                    evaluation_id=evaluation_id,
                    user_id=user.id,
                    session_id=session_id,
                    category=category,
                    pass_no=pass_no,
                    status=TaskStatus.OPEN,
                )
            )
            return token

    def _own_queue(self, s: Session, user: SignedInUser, queue_id: int) -> AnnotatorQueueRow:
        queue = s.get(AnnotatorQueueRow, queue_id)
        if queue is None:
            raise NotFound("there is no such queue")
        if queue.user_id != user.id:
            raise Forbidden("this queue belongs to someone else")
        return queue

    def _candidates(
        self, s: Session, evaluation_id: str, category: str, user: SignedInUser
    ) -> list[str]:
        """Eligible dialogues, those closest to their K passes first (finishing items early
        makes consensus available sooner), ties in an order of their own per annotator."""
        settings = evaluation_settings(s, evaluation_id)
        passes = settings.passes_per_item
        counts = (
            select(AnnotationTaskRow.session_id, func.count().label("n"))
            .where(
                AnnotationTaskRow.category == category,
                AnnotationTaskRow.status.in_(COUNTED),
            )
            .group_by(AnnotationTaskRow.session_id)
            .subquery()
        )
        mine = select(AnnotationTaskRow.session_id).where(
            AnnotationTaskRow.user_id == user.id, AnnotationTaskRow.category == category
        )
        taken = func.coalesce(counts.c.n, 0)
        query = (
            select(SessionRow.id, taken)
            .join(RunRow, RunRow.id == SessionRow.run_id)
            .outerjoin(counts, counts.c.session_id == SessionRow.id)
            .where(
                RunRow.evaluation_id == evaluation_id,
                SessionRow.status == "complete",
                SessionRow.id.not_in(mine),
                or_(SessionRow.tester_id.is_(None), SessionRow.tester_id != user.id),
                taken < passes,
                selected_for_humans(
                    s, evaluation_id, settings.human_annotation, settings.annotation_sample_size
                ),
            )
        )
        if self._schema.category(category).gate.requires_violation:
            query = query.where(self._has_violation())
        found = list(s.execute(query).tuples())
        found.sort(key=lambda row: (-row[1], _shuffle_key(user.id, row[0])))
        return [row[0] for row in found]

    def _has_violation(self) -> Exists:
        screening = self._schema.screening_category
        conditions = [
            and_(
                AnnotationAnswerRow.question_id == condition.question,
                AnnotationAnswerRow.value_text == condition.equals,
            )
            for condition in self._schema.violation.any_of
        ]
        return exists(
            select(AnnotationAnswerRow.id)
            .join(AnnotationPassRow, AnnotationPassRow.id == AnnotationAnswerRow.pass_id)
            .where(
                AnnotationPassRow.session_id == SessionRow.id,
                AnnotationPassRow.category == screening.id,
                AnnotationPassRow.annotator_kind == HUMAN,
                AnnotationAnswerRow.turn_index.is_(None),
                or_(*conditions),
            )
        )

    # -- tasks ---------------------------------------------------------------------------
    def task(self, user: SignedInUser, token: str) -> TaskView:
        with self._db.session() as s:
            task = _own_task(s, user, token)
            queue_id = s.scalar(
                select(AnnotatorQueueRow.id).where(
                    AnnotatorQueueRow.user_id == user.id,
                    AnnotatorQueueRow.evaluation_id == task.evaluation_id,
                    AnnotatorQueueRow.category == task.category,
                )
            )
            return TaskView(
                token=task.token,
                queue_id=queue_id or 0,
                category=self._schema.category(task.category),
                status=task.status,
                dialogue=blind_dialogue(s, task.session_id),
            )

    def skip(self, user: SignedInUser, token: str) -> None:
        """Give a task back. The dialogue is not offered to this annotator again."""
        with self._db.session() as s:
            task = _own_task(s, user, token)
            if task.status != TaskStatus.OPEN:
                raise Conflict("this dialogue is not open any more")
            task.status = TaskStatus.SKIPPED
            task.completed_at = utcnow()

    def submit(
        self,
        user: SignedInUser,
        token: str,
        answers: list[Answer],
        *,
        flagged: bool,
        note: str | None,
        seconds_in_view: float | None = None,
    ) -> None:
        """Store the pass with its answers and close the task, all or nothing.

        The task is closed first with a conditional update, so a form submitted twice
        stores one pass. The time on the item is what the page measured in view
        (``seconds_in_view``), capped by the time since the claim, which stands in when the
        page measured nothing (no script).
        """
        with self._db.session() as s:
            closed = s.execute(
                update(AnnotationTaskRow)
                .where(
                    AnnotationTaskRow.token == token,
                    AnnotationTaskRow.user_id == user.id,
                    AnnotationTaskRow.status == TaskStatus.OPEN,
                )
                .values(status=TaskStatus.DONE, completed_at=utcnow())
                .returning(
                    AnnotationTaskRow.id,
                    AnnotationTaskRow.session_id,
                    AnnotationTaskRow.category,
                    AnnotationTaskRow.pass_no,
                    AnnotationTaskRow.evaluation_id,
                    AnnotationTaskRow.created_at,
                )
            ).first()
            if closed is None:
                _own_task(s, user, token)  # raises if it is not this annotator's
                raise Conflict("this dialogue has already been submitted; thank you")
            task_id, session_id, category, pass_no, evaluation_id, claimed_at = closed
            since_claim = (utcnow() - as_utc(claimed_at)).total_seconds()
            seconds_on_item = (
                since_claim
                if seconds_in_view is None or seconds_in_view < 0
                else min(seconds_in_view, since_claim)
            )
            pass_id = add_pass(
                s,
                NewPass(
                    session_id=session_id,
                    category=category,
                    annotator=annotator_name(user),
                    annotator_kind=HUMAN,
                    pass_no=pass_no,
                    repeat_no=0,
                    ok=True,
                    error=None,
                    provenance={
                        "schema": self._schema.id,
                        "schema_version": self._schema.version,
                        "evaluation": evaluation_id,
                    },
                    answers=tuple(
                        StoredAnswer(answer.question_id, answer.turn_index, answer.value, None)
                        for answer in answers
                    ),
                    flagged=flagged,
                    note=note,
                    user_id=user.id,
                ),
            )
            s.execute(
                update(AnnotationTaskRow)
                .where(AnnotationTaskRow.id == task_id)
                .values(pass_id=pass_id, seconds_on_item=round(seconds_on_item, 1))
                .execution_options(synchronize_session=False)
            )


def _open_task(s: Session, user: SignedInUser, evaluation_id: str, category: str) -> str | None:
    """The token of the annotator's open task in a queue, if they have one."""
    return s.scalar(
        select(AnnotationTaskRow.token).where(
            AnnotationTaskRow.user_id == user.id,
            AnnotationTaskRow.evaluation_id == evaluation_id,
            AnnotationTaskRow.category == category,
            AnnotationTaskRow.status == TaskStatus.OPEN,
        )
    )


def _own_task(s: Session, user: SignedInUser, token: str) -> AnnotationTaskRow:
    task = s.scalars(select(AnnotationTaskRow).where(AnnotationTaskRow.token == token)).first()
    if task is None:
        raise NotFound("there is no such dialogue in your queue")
    if task.user_id != user.id:
        raise Forbidden("this dialogue is in someone else's queue")
    return task


def _shuffle_key(user_id: int, session_id: str) -> str:
    """A per-annotator order, so that annotators do not all start on the same dialogue."""
    return hashlib.sha256(f"{user_id}:{session_id}".encode()).hexdigest()
