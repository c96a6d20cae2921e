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
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial

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
    LOST = "lost"
    """Never stored: a claim that ran out whose dialogue has gone to others since."""


COUNTED = (TaskStatus.DONE,)
"""Tasks that hold one of a dialogue's K passes, besides claims that have not expired."""


class ClaimLost(Conflict):
    """A submission for a claim that ran out and whose dialogue went to others: the page
    shows the form again with what was typed, and says why."""


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
    others_waiting: int = 0
    """Other dialogues waiting for the annotator in the queue as the page is shown: with
    none, the page says it is the last, and submitting it claims nothing more."""
    lost: str | None = None
    """Why a claim that ran out cannot be taken back (status ``LOST``), in plain words."""


class AnnotationQueue:
    """``claim_ttl``: how long a claimed dialogue stays with its annotator unsubmitted, in a
    series that does not set its own (``EvaluationSettings.claim_minutes``); after it, the
    next annotator to claim in that queue takes it back into the queue. The annotator who
    comes back to it gets it again if it is still free, else the page says it was taken."""

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
            self._take_back_stale_claims(tx, evaluation_id, category)
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
            claims=(TaskStatus.OPEN, self._expired_before(tx, evaluation_id)),
            selection=settings.human_annotation,
            sample_size=settings.annotation_sample_size,
            violation=self._violation(category),
        )
        found.sort(key=lambda row: (-row[1], _shuffle_key(user.id, row[0])))
        return [row[0] for row in found]

    def _claim_time(self, tx: Transaction, evaluation_id: str) -> timedelta:
        minutes = evaluation_settings(tx, evaluation_id).claim_minutes
        return self.claim_ttl if minutes is None else timedelta(minutes=minutes)

    def _expired_before(self, tx: Transaction, evaluation_id: str) -> datetime:
        return self.clock() - self._claim_time(tx, evaluation_id)

    def _take_back_stale_claims(self, tx: Transaction, evaluation_id: str, category: str) -> None:
        before = self._expired_before(tx, evaluation_id)
        store.drop_stale_claims(tx, evaluation_id, category, status=TaskStatus.OPEN, before=before)

    def claim_minutes(self, evaluation_id: str) -> float:
        """How long a claim lasts in the series, in minutes."""
        with transaction(self._db) as tx:
            return self._claim_time(tx, evaluation_id).total_seconds() / 60

    def open_claims(self, evaluation_id: str) -> tuple[int, int]:
        """(dialogues claimed and not yet submitted in the series, how many past their time)."""
        with transaction(self._db) as tx:
            before = self._expired_before(tx, evaluation_id)
            return store.open_claims(tx, evaluation_id, status=TaskStatus.OPEN, before=before)

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
        """The annotator's task. A claim past its time is started afresh for the annotator
        who comes back to it; one already taken back into the queue is claimed again if its
        dialogue is still free, else the view's status is ``LOST`` and it says why (the page
        keeps the form, so nothing typed is lost)."""
        with transaction(self._db) as tx:
            task = store.task(tx, token)
            expired = store.expired_claim(tx, token) if task is None else None
        if expired is not None:
            if expired.user_id != user.id:
                raise Forbidden("this dialogue is in someone else's queue")
            return self._come_back(user, expired)
        with transaction(self._db) as tx:
            task = _own_task(tx, user, token)
            ran_out = as_utc(task.created_at) <= self._expired_before(tx, task.evaluation_id)
            if task.status == TaskStatus.OPEN and ran_out:  # not taken back yet: theirs again
                store.renew_claim(tx, task.id, status=TaskStatus.OPEN, at=self.clock())
            return self._view(
                tx,
                user,
                task.evaluation_id,
                task.token,
                task.session_id,
                task.category,
                task.status,
            )

    def _come_back(self, user: SignedInUser, claim: store.ExpiredClaim) -> TaskView:
        with transaction(self._db) as tx:
            lock_series(tx, claim.evaluation_id)
            return self._claim_again(tx, user, claim, at=self.clock())

    def _claim_again(
        self, tx: Transaction, user: SignedInUser, claim: store.ExpiredClaim, *, at: datetime
    ) -> TaskView:
        """Claim ``claim``'s dialogue again for its annotator (from ``at``) if it is still
        free, in a transaction that holds the series' lock."""
        evaluation_id, category = claim.evaluation_id, claim.category
        self._take_back_stale_claims(tx, evaluation_id, category)
        held = store.task_on(tx, user.id, claim.session_id, category)
        if held is not None:  # claimed again since (another tab, the queue), or done
            return self._view(
                tx, user, evaluation_id, held.token, held.session_id, category, held.status
            )
        if claim.session_id not in self._candidates(tx, evaluation_id, category, user):
            view = self._view(
                tx, user, evaluation_id, claim.token, claim.session_id, category, TaskStatus.LOST
            )
            return replace(view, lost=self._lost(tx, evaluation_id))
        store.add_task(
            tx,
            token=claim.token,
            evaluation_id=evaluation_id,
            user_id=user.id,
            session_id=claim.session_id,
            category=category,
            pass_no=store.next_pass_no(tx, claim.session_id, category),
            status=TaskStatus.OPEN,
            created_at=at,
        )
        store.forget_expired_claim(tx, claim.token)
        return self._view(
            tx, user, evaluation_id, claim.token, claim.session_id, category, TaskStatus.OPEN
        )

    def _view(
        self,
        tx: Transaction,
        user: SignedInUser,
        evaluation_id: str,
        token: str,
        session_id: str,
        category: str,
        status: str,
    ) -> TaskView:
        others = self._candidates(tx, evaluation_id, category, user)
        return TaskView(
            token=token,
            queue_id=store.queue_id(tx, user.id, evaluation_id, category) or 0,
            category=self._schema.category(category),
            status=status,
            dialogue=blind_dialogue(tx, session_id),
            others_waiting=len([other for other in others if other != session_id]),
        )

    def _lost(self, tx: Transaction, evaluation_id: str) -> str:
        minutes = self._claim_time(tx, evaluation_id).total_seconds() / 60
        return (
            f"This dialogue was held for you for {minutes:g} minutes; after that it went back "
            "to the queue and other annotators have taken all its places since, so your "
            "answers are not stored yet. They are kept below: submit them again to try once "
            "more (they are stored if a place frees up), or go back to your queues."
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
        page measured nothing (no script). A claim that ran out and went back to the queue
        is claimed again first if its dialogue is still free; if not, :class:`ClaimLost`.
        """
        store_pass = partial(
            self._store_pass,
            user=user,
            answers=answers,
            flagged=flagged,
            note=note,
            seconds_in_view=seconds_in_view,
        )
        with transaction(self._db) as tx:
            ran_out = store_pass(tx, token)
        if ran_out is None:
            return
        with transaction(self._db) as tx:
            lock_series(tx, ran_out.evaluation_id)
            # Claimed again from its first claim, so the time on the item counts from there.
            again = self._claim_again(tx, user, ran_out, at=ran_out.claimed_at)
            if again.status == TaskStatus.LOST:
                raise ClaimLost(again.lost or "this dialogue is not yours any more")
            if again.status != TaskStatus.OPEN or store_pass(tx, again.token) is not None:
                raise Conflict("this dialogue has already been submitted; thank you")

    def _store_pass(
        self,
        tx: Transaction,
        token: str,
        *,
        user: SignedInUser,
        answers: list[Answer],
        flagged: bool,
        note: str | None,
        seconds_in_view: float | None,
    ) -> store.ExpiredClaim | None:
        """Store the pass of the open task ``token``; the claim it named if that ran out."""
        closed = store.close_task(tx, token, user.id, claim=(TaskStatus.OPEN, TaskStatus.DONE))
        if closed is None:
            ran_out = store.expired_claim(tx, token)
            if ran_out is not None and ran_out.user_id == user.id:
                return ran_out
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
        return None


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
