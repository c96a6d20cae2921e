"""Sampled reviews: seniors check a fixed share of other annotators' passes, and flagged ones.

Each evaluation series sets the share (its review rate); which passes are sampled is decided
by their id, so the sample is stable across requests.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from corix.assessment import AnnotationSchema
from corix.storage import Database
from corix.storage.orm import AnnotationPassRow
from corix.storage.orm_web import AnnotationTaskRow, PassReviewRow
from corix.web.services.accounts import SignedInUser
from corix.web.services.dialogues import BlindDialogue, blind_dialogue
from corix.web.services.errors import Conflict, Forbidden, InputError, NotFound
from corix.web.services.senior_scope import (
    AnswerKey,
    PassSummary,
    answer_value,
    pass_summary,
    passes_in_scope,
    seconds_on_items,
    senior_scope,
)

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
        with self._db.session() as s:
            return sorted(senior_scope(s, user).categories)

    def review_sample(self, user: SignedInUser) -> list[PassSummary]:
        with self._db.session() as s:
            scope = senior_scope(s, user)
            verdicts = dict(
                s.execute(select(PassReviewRow.pass_id, PassReviewRow.verdict)).tuples().all()
            )
            sampled = [
                row
                for row, evaluation in passes_in_scope(s, scope)
                if row.user_id != user.id and is_sampled(row.id, scope.review_rate[evaluation])
            ]
            seconds = seconds_on_items(s, (row.id for row in sampled))
            return [
                pass_summary(self._schema, row, seconds.get(row.id), verdicts.get(row.id))
                for row in sampled
            ]

    def flagged(self, user: SignedInUser) -> list[PassSummary]:
        """Passes flagged for sensitive information, or carrying a note, in the senior's scope."""
        with self._db.session() as s:
            scope = senior_scope(s, user)
            marked = [row for row, _ in passes_in_scope(s, scope) if row.flagged or row.note]
            seconds = seconds_on_items(s, (row.id for row in marked))
            return [pass_summary(self._schema, row, seconds.get(row.id)) for row in marked]

    def pass_detail(self, user: SignedInUser, pass_id: int) -> PassDetail:
        with self._db.session() as s:
            row = self._pass_in_scope(s, user, pass_id)
            review = s.scalars(
                select(PassReviewRow).where(PassReviewRow.pass_id == pass_id)
            ).first()
            seconds = seconds_on_items(s, [pass_id]).get(pass_id)
            return PassDetail(
                summary=pass_summary(
                    self._schema, row, seconds, review.verdict if review else None
                ),
                dialogue=blind_dialogue(s, row.session_id),
                answers={
                    (a.question_id, a.turn_index): answer_value(a.value_num, a.value_text)
                    for a in row.answers
                    if a.value_num is not None or a.value_text is not None
                },
            )

    def record_review(
        self, user: SignedInUser, pass_id: int, verdict: str, note: str | None
    ) -> None:
        if verdict not in VERDICTS:
            raise InputError("choose agree or disagree", {"verdict": "required"})
        try:
            with self._db.session() as s:
                row = self._pass_in_scope(s, user, pass_id)
                if row.user_id == user.id:
                    raise Forbidden("you cannot review your own pass")
                reviewed = select(PassReviewRow.id).where(PassReviewRow.pass_id == pass_id)
                if s.scalars(reviewed).first():
                    raise Conflict("this pass has already been reviewed")
                s.add(
                    PassReviewRow(pass_id=pass_id, reviewer_id=user.id, verdict=verdict, note=note)
                )
        except IntegrityError:
            # A concurrent review won the unique pass_id: the same answer as above.
            raise Conflict("this pass has already been reviewed") from None

    def _pass_in_scope(self, s: Session, user: SignedInUser, pass_id: int) -> AnnotationPassRow:
        found = (
            s.execute(
                select(AnnotationPassRow, AnnotationTaskRow.evaluation_id)
                .join(AnnotationTaskRow, AnnotationTaskRow.pass_id == AnnotationPassRow.id)
                .where(AnnotationPassRow.id == pass_id)
                .options(selectinload(AnnotationPassRow.answers))
            )
            .tuples()
            .first()
        )
        if found is None:
            raise NotFound("there is no such pass")
        row, evaluation = found
        if not senior_scope(s, user).covers(evaluation, row.category):
            raise Forbidden("this pass is outside the categories you review")
        return row
