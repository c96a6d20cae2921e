"""The qualification test: a fresh random draw of gold dialogues per attempt, scored against a
pass mark, with a limit on attempts and a cool-down after a failed one.

An annotator sees real dialogues only after passing. The score is the share of scored gold
answers matched; a follow-up the annotator's own answers hide counts as missed. Feedback is
given per question, as counts over the draw, never as the expected answers: the gold pool
is small, and an answer key shown once would be copied into every later attempt. For the
same reason a draw prefers dialogues the annotator has not seen, and the form names the
drawn dialogues by their place in the draw, never by their (telling) gold ids.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field

from corix.assessment import AnnotationSchema
from corix.assessment.answers import Answer
from corix.storage import Database
from corix.storage.web import Transaction, transaction
from corix.storage.web import qualification as store
from corix.storage.web.qualification import NewAttempt
from corix.web.services.accounts import SignedInUser
from corix.web.services.annotation_forms import checked_answers
from corix.web.services.clock import as_utc, utcnow
from corix.web.services.service_errors import Conflict, Forbidden, InputError
from corix.web.services.training import GoldDialogue, GoldSet, gold_answers


def gold_prefix(place: int) -> str:
    """The form prefix of the draw's dialogue at ``place`` (1-based)."""
    return f"g:{place}"


class QualificationRules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    pass_mark: float = Field(default=0.8, ge=0, le=1)
    draw_size: int = Field(default=4, ge=1)
    max_attempts: int = Field(default=3, ge=1)
    cooldown: timedelta = timedelta(minutes=30)
    """Wait after a failed attempt, so a retake follows a look at the training material."""


@dataclass(frozen=True)
class QuestionFeedback:
    """How many of the draw's scored answers to one question matched the gold answers."""

    question: str
    matched: int
    scored: int


@dataclass(frozen=True)
class QualificationResult:
    score: float
    pass_mark: float
    feedback: list[QuestionFeedback]

    @property
    def passed(self) -> bool:
        return self.score >= self.pass_mark


@dataclass(frozen=True)
class QualificationStatus:
    passed: bool
    attempts: int
    best_score: float | None
    max_attempts: int
    next_attempt_at: datetime | None
    """When the cool-down after the last failed attempt ends; None when it has ended."""

    @property
    def attempts_left(self) -> int:
        return max(self.max_attempts - self.attempts, 0)

    @property
    def locked(self) -> bool:
        """Every attempt used without passing: only the evaluation team can help now."""
        return not self.passed and self.attempts_left == 0

    @property
    def can_attempt(self) -> bool:
        return not self.passed and not self.locked and self.next_attempt_at is None


def score_answers(
    schema: AnnotationSchema,
    dialogues: Sequence[GoldDialogue],
    given: Mapping[str, list[Answer]],
    *,
    pass_mark: float,
) -> QualificationResult:
    """Score answers (gold dialogue id → answers in stored form) against the drawn dialogues."""
    tallies: dict[str, list[int]] = {}
    for dialogue in dialogues:
        answered = {a.question_id: a.value for a in given.get(dialogue.id, [])}
        for expected in gold_answers(schema, dialogue):
            tally = tallies.setdefault(expected.question_id, [0, 0])
            tally[0] += answered.get(expected.question_id) == expected.value
            tally[1] += 1
    screening = schema.screening_category
    feedback = [
        QuestionFeedback(question.text, *tallies[question.id])
        for question in screening.questions
        if question.id in tallies
    ]
    matched = sum(item.matched for item in feedback)
    scored = sum(item.scored for item in feedback)
    return QualificationResult(matched / scored if scored else 0.0, pass_mark, feedback)


class Qualification:
    def __init__(
        self,
        db: Database,
        schema: AnnotationSchema,
        gold: GoldSet,
        rules: QualificationRules,
        *,
        rng: random.Random | None = None,
    ) -> None:
        if rules.draw_size > len(gold.dialogues):
            raise ValueError(
                f"a draw of {rules.draw_size} needs at least as many gold dialogues "
                f"(the set has {len(gold.dialogues)})"
            )
        self._db = db
        self._schema = schema
        self._by_id = {dialogue.id: dialogue for dialogue in gold.dialogues}
        self._rng = rng or random.SystemRandom()
        self.gold = gold
        self.rules = rules
        self.clock: Callable[[], datetime] = utcnow
        """The clock attempts are stamped with and cool down against (tests move it on)."""
        self.test_version = f"{schema.id}-{schema.version}/gold-{gold.version}"

    @property
    def pass_mark(self) -> float:
        return self.rules.pass_mark

    def status(self, user: SignedInUser) -> QualificationStatus:
        with transaction(self._db) as tx:
            return self._status(tx, user)

    def _status(self, tx: Transaction, user: SignedInUser) -> QualificationStatus:
        tally = store.attempt_tally(tx, user.id, self.test_version)
        next_attempt_at = None
        if tally.last_at is not None and not tally.passed:
            ends = as_utc(tally.last_at) + self.rules.cooldown
            next_attempt_at = ends if ends > self.clock() else None
        return QualificationStatus(
            tally.passed, tally.attempts, tally.best_score, self.rules.max_attempts, next_attempt_at
        )

    def is_qualified(self, user: SignedInUser) -> bool:
        return self.status(user).passed

    def draw(self, user: SignedInUser) -> list[GoldDialogue]:
        """The dialogues of the user's open attempt, drawn now if there is none.

        A new draw takes the dialogues the user has seen least often, never the previous
        attempt's while others are left, ties broken at random: a retake repeats no
        dialogue whose feedback was seen until the pool runs out.
        """
        with transaction(self._db) as tx:
            self._check_may_attempt(self._status(tx, user))
            open_draw = store.open_draw(tx, user.id, self.test_version)
            if open_draw is not None:
                return self._dialogues(open_draw.dialogue_ids)
            chosen = self._fresh_draw(store.earlier_draws(tx, user.id, self.test_version))
            store.add_draw(tx, user.id, self.test_version, chosen)
            return self._dialogues(chosen)

    def _fresh_draw(self, earlier: Sequence[Sequence[str]]) -> list[str]:
        seen = Counter(dialogue_id for draw in earlier for dialogue_id in draw)
        last = set(earlier[-1]) if earlier else set()
        pool = sorted(self._by_id)
        self._rng.shuffle(pool)  # random ties: the sort below is stable
        pool.sort(key=lambda dialogue_id: (seen[dialogue_id], dialogue_id in last))
        chosen = pool[: self.rules.draw_size]
        self._rng.shuffle(chosen)
        return chosen

    def submit(self, user: SignedInUser, form: Mapping[str, str]) -> QualificationResult:
        """Check the open draw is fully answered, score it and record the attempt."""
        with transaction(self._db) as tx:
            self._check_may_attempt(self._status(tx, user))
            draw = store.open_draw(tx, user.id, self.test_version)
            if draw is None:
                raise Conflict("this test was already submitted; open the test again")
            dialogues = self._dialogues(draw.dialogue_ids)
            given = self._checked(dialogues, form)
            result = score_answers(self._schema, dialogues, given, pass_mark=self.pass_mark)
            attempt = NewAttempt(
                user_id=user.id,
                test_version=self.test_version,
                score=result.score,
                pass_mark=self.pass_mark,
                passed=result.passed,
                answers={
                    dialogue_id: {a.question_id: a.value for a in answers}
                    for dialogue_id, answers in given.items()
                },
                at=self.clock(),
            )
            # The draw is claimed conditionally: of two submissions of one draw, one counts.
            if not store.add_attempt(tx, draw.id, attempt):
                raise Conflict("this test was already submitted; open the test again")
            return result

    def _checked(
        self, dialogues: Sequence[GoldDialogue], form: Mapping[str, str]
    ) -> dict[str, list[Answer]]:
        screening = self._schema.screening_category
        given: dict[str, list[Answer]] = {}
        problems: dict[str, str] = {}
        for place, dialogue in enumerate(dialogues, start=1):
            try:
                given[dialogue.id] = checked_answers(
                    self._schema,
                    screening,
                    form,
                    len(dialogue.turns),
                    prefix=gold_prefix(place),
                )
            except InputError as exc:
                problems.update(exc.problems)
        if problems:
            raise InputError("please answer every question of every dialogue", problems)
        return given

    def _check_may_attempt(self, status: QualificationStatus) -> None:
        if status.passed:
            raise Conflict("you have passed the qualification test already")
        if status.locked:
            raise Forbidden(
                "you have used every attempt at the qualification test; "
                "ask your evaluation team to talk it through"
            )
        if status.next_attempt_at is not None:
            raise Forbidden(
                "the next attempt opens at "
                f"{status.next_attempt_at:%H:%M} UTC; read the training material meanwhile"
            )

    def _dialogues(self, dialogue_ids: Sequence[str]) -> list[GoldDialogue]:
        return [self._by_id[dialogue_id] for dialogue_id in dialogue_ids]
