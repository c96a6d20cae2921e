"""Sampled reviews: seniors check a fixed share of other annotators' passes, and flagged ones.

Each evaluation series sets the share (its review rate); which passes are sampled is decided
by their id, so the sample is stable across requests.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from corix.assessment import AnnotationSchema
from corix.storage import Database
from corix.storage.web import Duplicate, Transaction, transaction
from corix.storage.web import passes as store
from corix.storage.web.passes import HumanPass
from corix.web.services.accounts import SignedInUser
from corix.web.services.dialogues import BlindDialogue, blind_dialogue
from corix.web.services.senior_scope import (
    AnswerKey,
    PassSummary,
    pass_summary,
    passes_in_scope,
    senior_scope,
)
from corix.web.services.service_errors import Conflict, Forbidden, InputError, NotFound

VERDICTS = ("agree", "disagree")


def is_sampled(pass_id: int, rate: float) -> bool:
    """A fixed pseudo-random share of passes: the same passes stay sampled across requests."""
    digest = hashlib.sha256(f"review:{pass_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


@dataclass(frozen=True)
class PassDetail:
    summary: PassSummary
    dialogue: BlindDialogue
    answers: dict[AnswerKey, str | float]


class Review:
    def __init__(self, db: Database, schema: AnnotationSchema) -> None:
        self._db = db
        self._schema = schema

    def evaluations_of(self, user: SignedInUser) -> list[str]:
        """The evaluation series the senior annotates in, in a stable order."""
        with transaction(self._db) as tx:
            return sorted(senior_scope(tx, user).categories)

    def review_sample(self, user: SignedInUser) -> list[PassSummary]:
        with transaction(self._db) as tx:
            scope = senior_scope(tx, user)
            verdicts = store.verdicts(tx)
            sampled = [
                row
                for row in passes_in_scope(tx, scope)
                if row.user_id != user.id
                and is_sampled(row.id, scope.review_rate[row.evaluation_id])
            ]
            seconds = store.seconds_on_items(tx, (row.id for row in sampled))
            return [
                pass_summary(self._schema, row, seconds.get(row.id), verdicts.get(row.id))
                for row in sampled
            ]

    def flagged(self, user: SignedInUser) -> list[PassSummary]:
        """Passes flagged for sensitive information, or carrying a note, in the senior's scope."""
        with transaction(self._db) as tx:
            scope = senior_scope(tx, user)
            marked = [row for row in passes_in_scope(tx, scope) if row.flagged or row.note]
            seconds = store.seconds_on_items(tx, (row.id for row in marked))
            return [pass_summary(self._schema, row, seconds.get(row.id)) for row in marked]

    def pass_detail(self, user: SignedInUser, pass_id: int) -> PassDetail:
        with transaction(self._db) as tx:
            row = self._pass_in_scope(tx, user, pass_id)
            verdict = store.review_of(tx, pass_id)
            seconds = store.seconds_on_items(tx, [pass_id]).get(pass_id)
            return PassDetail(
                summary=pass_summary(self._schema, row, seconds, verdict),
                dialogue=blind_dialogue(tx, row.session_id),
                answers={
                    (a.question_id, a.turn_index): a.value
                    for a in row.answers
                    if a.value is not None
                },
            )

    def record_review(
        self, user: SignedInUser, pass_id: int, verdict: str, note: str | None
    ) -> None:
        if verdict not in VERDICTS:
            raise InputError("choose agree or disagree", {"verdict": "required"})
        try:
            with transaction(self._db) as tx:
                row = self._pass_in_scope(tx, user, pass_id)
                if row.user_id == user.id:
                    raise Forbidden("you cannot review your own pass")
                if store.review_of(tx, pass_id) is not None:
                    raise Conflict("this pass has already been reviewed")
                store.add_review(tx, pass_id, user.id, verdict, note)
        except Duplicate:
            # A concurrent review won the unique pass_id: the same answer as above.
            raise Conflict("this pass has already been reviewed") from None

    def _pass_in_scope(self, tx: Transaction, user: SignedInUser, pass_id: int) -> HumanPass:
        found = store.human_passes(tx, pass_id=pass_id)
        if not found:
            raise NotFound("there is no such pass")
        row = found[0]
        if not senior_scope(tx, user).covers(row.evaluation_id, row.category):
            raise Forbidden("this pass is outside the categories you review")
        return row
