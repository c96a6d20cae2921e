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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from corix.assessment import HUMAN_ANNOTATOR_PREFIX, AnnotationSchema, Category
from corix.assessment.answers import Answer
from corix.storage import Database, NewPass, StoredAnswer
from corix.storage.web import Transaction, lock_series, transaction
from corix.storage.web import queues as store
from corix.storage.web.passes import HUMAN
from corix.storage.web.queues import QueueRecord, TaskRecord, Violation
from corix.web.security import new_token
from corix.web.services.accounts import SignedInUser
from corix.web.services.clock import as_utc, utcnow
from corix.web.services.dialogues import BlindDialogue, blind_dialogue
from corix.web.services.evaluations import evaluation_settings
from corix.web.services.qualification import Qualification
from corix.web.services.service_errors import Conflict, Forbidden, NotFound


class TaskStatus:
    OPEN = "open"
    DONE = "done"
    SKIPPED = "skipped"


COUNTED = (TaskStatus.DONE,)
"""Tasks that hold one of a dialogue's K passes, besides claims that have not expired."""


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
    """``claim_ttl``: how long a claimed dialogue stays with its annotator unsubmitted; after
    it, the next annotator to claim in that queue takes it back into the queue (the claim's
    own submission then fails and says why)."""

    def __init__(
        self,
        db: Database,
        schema: AnnotationSchema,
        qualification: Qualification,
        *,
        claim_ttl: timedelta,
    ) -> None:
        self._db = db
        self._schema = schema
        self._qualification = qualification
        self.claim_ttl = claim_ttl
        self.clock: Callable[[], datetime] = utcnow
        """The clock claims are stamped with and age against (tests move it on)."""

    # -- queues --------------------------------------------------------------------------
    def queues(self, user: SignedInUser) -> list[QueueView]:
        with transaction(self._db) as tx:
            rows = store.queues_of(tx, user.id)
            order = {c.id: c.order for c in self._schema.categories}
            views = []
            for queue, evaluation in sorted(
                rows, key=lambda r: (r[1], order.get(r[0].category, 99))
            ):
                category = self._schema.category(queue.category)
                open_token = _open_task(tx, user, queue.evaluation_id, queue.category)
                done = store.done_count(
                    tx, user.id, queue.evaluation_id, queue.category, status=TaskStatus.DONE
                )
                available = len(self._candidates(tx, queue.evaluation_id, queue.category, user))
                views.append(QueueView(queue.id, evaluation, category, available, done, open_token))
            return views

    def claim_next(self, user: SignedInUser, queue_id: int) -> str | None:
        """The token of the annotator's next task in a queue, or ``None`` when it is empty.

        An open task is handed back first, so a refresh or a second tab never claims two.
        Real dialogues are shown only to annotators who passed the qualification test.
        Claims in one series are serialized, so racing annotators never exceed K passes.
        """
        if not self._qualification.is_qualified(user):
            raise Forbidden("please pass the qualification test before annotating")
        with transaction(self._db) as tx:
            queue = self._own_queue(tx, user, queue_id)
            evaluation_id, category = queue.evaluation_id, queue.category
        with transaction(self._db) as tx:
            lock_series(tx, evaluation_id)
            store.drop_stale_claims(
                tx, evaluation_id, category, status=TaskStatus.OPEN, before=self._expired_before()
            )
            open_token = _open_task(tx, user, evaluation_id, category)
            if open_token is not None:
                return open_token
            candidates = self._candidates(tx, evaluation_id, category, user)
            if not candidates:
                return None
            session_id = candidates[0]
            token = new_token()
            store.add_task(
                tx,
                token=token,
                evaluation_id=evaluation_id,
                user_id=user.id,
                session_id=session_id,
                category=category,
                pass_no=store.next_pass_no(tx, session_id, category),
                status=TaskStatus.OPEN,
                created_at=self.clock(),
            )
            return token

    def _own_queue(self, tx: Transaction, user: SignedInUser, queue_id: int) -> QueueRecord:
        queue = store.queue(tx, queue_id)
        if queue is None:
            raise NotFound("there is no such queue")
        if queue.user_id != user.id:
            raise Forbidden("this queue belongs to someone else")
        return queue

    def _candidates(
        self, tx: Transaction, evaluation_id: str, category: str, user: SignedInUser
    ) -> list[str]:
        """Eligible dialogues, those closest to their K passes first (finishing items early
        makes consensus available sooner), ties in an order of their own per annotator."""
        settings = evaluation_settings(tx, evaluation_id)
        found = store.candidates(
            tx,
            evaluation_id,
            category,
            user.id,
            passes=settings.passes_per_item,
            counted=COUNTED,
            claims=(TaskStatus.OPEN, self._expired_before()),
            selection=settings.human_annotation,
            sample_size=settings.annotation_sample_size,
            violation=self._violation(category),
        )
        found.sort(key=lambda row: (-row[1], _shuffle_key(user.id, row[0])))
        return [row[0] for row in found]

    def _expired_before(self) -> datetime:
        return self.clock() - self.claim_ttl

    def open_claims(self, evaluation_id: str) -> tuple[int, int]:
        """(dialogues claimed and not yet submitted in the series, how many past their time)."""
        with transaction(self._db) as tx:
            return store.open_claims(
                tx, evaluation_id, status=TaskStatus.OPEN, before=self._expired_before()
            )

    def _violation(self, category: str) -> Violation | None:
        """What a gated category waits for: a person's screening answer recording one."""
        if not self._schema.category(category).gate.requires_violation:
            return None
        return Violation(
            self._schema.screening_category.id,
            tuple((c.question, c.equals) for c in self._schema.violation.any_of),
        )

    # -- tasks ---------------------------------------------------------------------------
    def task(self, user: SignedInUser, token: str) -> TaskView:
        with transaction(self._db) as tx:
            task = _own_task(tx, user, token)
            queue_id = store.queue_id(tx, user.id, task.evaluation_id, task.category)
            return TaskView(
                token=task.token,
                queue_id=queue_id or 0,
                category=self._schema.category(task.category),
                status=task.status,
                dialogue=blind_dialogue(tx, task.session_id),
            )

    def _expired(self) -> str:
        minutes = round(self.claim_ttl.total_seconds() / 60)
        return (
            f"this dialogue was held for you for {minutes} minutes and has gone back to the "
            "queue; please take the next one"
        )

    def skip(self, user: SignedInUser, token: str) -> None:
        """Give a task back. The dialogue is not offered to this annotator again."""
        with transaction(self._db) as tx:
            task = _own_task(tx, user, token)
            if task.status != TaskStatus.OPEN:
                raise Conflict("this dialogue is not open any more")
            store.skip_task(tx, task.id, TaskStatus.SKIPPED)

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
        with transaction(self._db) as tx:
            closed = store.close_task(tx, token, user.id, claim=(TaskStatus.OPEN, TaskStatus.DONE))
            if closed is None:
                if store.task(tx, token) is None:
                    raise Conflict(self._expired())
                _own_task(tx, user, token)  # raises if it is not this annotator's
                raise Conflict("this dialogue has already been submitted; thank you")
            since_claim = (self.clock() - as_utc(closed.created_at)).total_seconds()
            seconds_on_item = (
                since_claim
                if seconds_in_view is None or seconds_in_view < 0
                else min(seconds_in_view, since_claim)
            )
            new = NewPass(
                session_id=closed.session_id,
                category=closed.category,
                annotator=annotator_name(user),
                annotator_kind=HUMAN,
                pass_no=closed.pass_no,
                repeat_no=0,
                ok=True,
                error=None,
                provenance={
                    "schema": self._schema.id,
                    "schema_version": self._schema.version,
                    "evaluation": closed.evaluation_id,
                },
                answers=tuple(
                    StoredAnswer(answer.question_id, answer.turn_index, answer.value, None)
                    for answer in answers
                ),
                flagged=flagged,
                note=note,
                user_id=user.id,
            )
            store.add_task_pass(tx, closed.id, new, round(seconds_on_item, 1))


def _open_task(
    tx: Transaction, user: SignedInUser, evaluation_id: str, category: str
) -> str | None:
    """The token of the annotator's open task in a queue, if they have one."""
    return store.open_task_token(tx, user.id, evaluation_id, category, status=TaskStatus.OPEN)


def _own_task(tx: Transaction, user: SignedInUser, token: str) -> TaskRecord:
    task = store.task(tx, token)
    if task is None:
        raise NotFound("there is no such dialogue in your queue")
    if task.user_id != user.id:
        raise Forbidden("this dialogue is in someone else's queue")
    return task


def _shuffle_key(user_id: int, session_id: str) -> str:
    """A per-annotator order, so that annotators do not all start on the same dialogue."""
    return hashlib.sha256(f"{user_id}:{session_id}".encode()).hexdigest()
