"""The qualification test: screening questions on gold dialogues, scored against a pass mark.

An annotator sees real dialogues only after passing. The score is the share of scored gold
answers matched; a follow-up the annotator's own answers hide counts as missed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import func, select

from corix.assessment import AnnotationSchema, Answer
from corix.storage import Database
from corix.storage.orm_web import QualificationAttemptRow
from corix.web.services.accounts import SignedInUser
from corix.web.services.annotation_forms import checked_answers
from corix.web.services.errors import InputError
from corix.web.services.training import GoldDialogue, GoldSet, gold_answers


def gold_prefix(dialogue: GoldDialogue) -> str:
    return f"g:{dialogue.id}"


@dataclass(frozen=True)
class QuestionResult:
    question_id: str
    expected: str | float
    given: str | float | None

    @property
    def correct(self) -> bool:
        return self.given == self.expected


@dataclass(frozen=True)
class DialogueResult:
    dialogue: GoldDialogue
    questions: list[QuestionResult]


@dataclass(frozen=True)
class QualificationResult:
    score: float
    pass_mark: float
    dialogues: list[DialogueResult]

    @property
    def passed(self) -> bool:
        return self.score >= self.pass_mark


@dataclass(frozen=True)
class QualificationStatus:
    passed: bool
    attempts: int
    best_score: float | None


def score_answers(
    schema: AnnotationSchema,
    gold: GoldSet,
    given: Mapping[str, list[Answer]],
    *,
    pass_mark: float,
) -> QualificationResult:
    """Score answers (gold dialogue id → answers in stored form) against the gold set."""
    results: list[DialogueResult] = []
    matched = total = 0
    for dialogue in gold.dialogues:
        answered = {a.question_id: a.value for a in given.get(dialogue.id, [])}
        questions = [
            QuestionResult(
                question_id=expected.question_id,
                expected=expected.value if expected.value is not None else "",
                given=answered.get(expected.question_id),
            )
            for expected in gold_answers(schema, dialogue)
        ]
        matched += sum(q.correct for q in questions)
        total += len(questions)
        results.append(DialogueResult(dialogue, questions))
    return QualificationResult(matched / total if total else 0.0, pass_mark, results)


class Qualification:
    def __init__(
        self, db: Database, schema: AnnotationSchema, gold: GoldSet, *, pass_mark: float
    ) -> None:
        self._db = db
        self._schema = schema
        self.gold = gold
        self.pass_mark = pass_mark
        self.test_version = f"{schema.id}-{schema.version}/gold-{gold.version}"

    def status(self, user: SignedInUser) -> QualificationStatus:
        with self._db.session() as s:
            attempts, best, passed = s.execute(
                select(
                    func.count(),
                    func.max(QualificationAttemptRow.score),
                    func.count().filter(QualificationAttemptRow.passed.is_(True)),
                ).where(
                    QualificationAttemptRow.user_id == user.id,
                    QualificationAttemptRow.test_version == self.test_version,
                )
            ).one()
            return QualificationStatus(bool(passed), attempts or 0, best)

    def is_qualified(self, user: SignedInUser) -> bool:
        return self.status(user).passed

    def submit(self, user: SignedInUser, form: Mapping[str, str]) -> QualificationResult:
        """Check that every gold dialogue is fully answered, score it and record the attempt."""
        screening = self._schema.screening_category
        given: dict[str, list[Answer]] = {}
        problems: dict[str, str] = {}
        for dialogue in self.gold.dialogues:
            try:
                given[dialogue.id] = checked_answers(
                    self._schema,
                    screening,
                    form,
                    len(dialogue.turns),
                    prefix=gold_prefix(dialogue),
                )
            except InputError as exc:
                problems.update(exc.problems)
        if problems:
            raise InputError("please answer every question of every dialogue", problems)
        result = score_answers(self._schema, self.gold, given, pass_mark=self.pass_mark)
        with self._db.session() as s:
            s.add(
                QualificationAttemptRow(
                    user_id=user.id,
                    test_version=self.test_version,
                    score=result.score,
                    pass_mark=self.pass_mark,
                    passed=result.passed,
                    answers={
                        dialogue_id: {a.question_id: a.value for a in answers}
                        for dialogue_id, answers in given.items()
                    },
                )
            )
        return result
