"""A stored run read whole, as the run file's records: every row of it, nothing derived.

:func:`run_document` reads the run's own rows (the run, its packs, annotation jobs and
written reports, the applications its sessions used); :func:`iter_archived_sessions`
streams its sessions, every status, each with its turns, questionnaire answers, passes
with their answers, consensus rows and resolutions, a batch at a time. Surrogate ids stay
behind; people are named by username (a questionnaire respondent ``user:<username>``).
:mod:`corix.storage.run_restore` writes them back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from corix import __version__
from corix.domain import (
    AnnotationJobSettings,
    ArchivedAnnotationJob,
    ArchivedApplication,
    ArchivedConsensus,
    ArchivedPack,
    ArchivedPass,
    ArchivedPassAnswer,
    ArchivedQuestionnaireAnswer,
    ArchivedReport,
    ArchivedResolution,
    ArchivedRun,
    ArchivedSession,
    EndReason,
    Level,
    RunDocument,
    SessionSource,
    SessionStatus,
    TurnRecord,
    WrittenReportSettings,
)
from corix.storage.clock import as_utc, utcnow
from corix.storage.database import Database, scalar_chunks
from corix.storage.orm import (
    AnnotationConsensusRow,
    AnnotationJobRow,
    AnnotationPassRow,
    ApplicationRow,
    EvaluationRow,
    ResolutionRow,
    RunPackRow,
    SessionRow,
    WrittenReportRow,
)
from corix.storage.people import PERSON_RESPONDENT_PREFIX, respondent_name, usernames
from corix.storage.questionnaires import questionnaire_answers
from corix.storage.runs import get_run
from corix.storage.sessions import messages_from_column
from corix.storage.store_records import NewQuestionnaireAnswer

__all__ = ["iter_archived_sessions", "run_document"]

RowT = TypeVar(
    "RowT", NewQuestionnaireAnswer, AnnotationPassRow, AnnotationConsensusRow, ResolutionRow
)


def run_document(db: Database, run_id: str) -> RunDocument:
    """The run's own rows as the run file's first line; ``NotFoundError`` if unknown."""
    run = get_run(db, run_id)
    with db.session() as s:
        series = None if run.evaluation_id is None else s.get(EvaluationRow, run.evaluation_id)
        return RunDocument(
            corix_version=__version__,
            exported_at=utcnow(),
            run=ArchivedRun(
                id=run.id,
                name=run.name,
                series=None if series is None else series.name,
                plan=run.plan,
                seed=run.seed,
                status=run.status,
                summary=run.summary,
                created_at=as_utc(run.created_at),
                finished_at=_utc(run.finished_at),
            ),
            applications=_applications(s, run_id),
            packs=tuple(
                ArchivedPack(
                    name=row.name,
                    version=row.version,
                    source=row.source,
                    content_hash=row.content_hash,
                    definition=row.definition,
                )
                for row in s.scalars(
                    select(RunPackRow).where(RunPackRow.run_id == run_id).order_by(RunPackRow.name)
                )
            ),
            annotation_jobs=tuple(
                ArchivedAnnotationJob(
                    annotator=row.annotator,
                    started_at=as_utc(row.started_at),
                    settings=AnnotationJobSettings.model_validate(row.settings),
                )
                for row in s.scalars(
                    select(AnnotationJobRow)
                    .where(AnnotationJobRow.run_id == run_id)
                    .order_by(AnnotationJobRow.id)
                )
            ),
            reports=tuple(
                ArchivedReport(
                    report_id=row.report_id,
                    written_at=as_utc(row.written_at),
                    digest=row.digest,
                    settings=WrittenReportSettings.model_validate(row.settings),
                )
                for row in s.scalars(
                    select(WrittenReportRow)
                    .where(WrittenReportRow.run_id == run_id)
                    .order_by(WrittenReportRow.id)
                )
            ),
            sessions=s.scalar(
                select(func.count()).select_from(SessionRow).where(SessionRow.run_id == run_id)
            )
            or 0,
        )


def _applications(s: Session, run_id: str) -> tuple[ArchivedApplication, ...]:
    used = select(SessionRow.application_id).where(SessionRow.run_id == run_id)
    rows = s.scalars(select(ApplicationRow).where(ApplicationRow.id.in_(used)))
    return tuple(
        sorted(
            (
                ArchivedApplication(name=row.name, spec=row.spec, version=row.version)
                for row in rows
            ),
            key=lambda application: application.name,
        )
    )


def iter_archived_sessions(
    db: Database, run_id: str, *, batch_size: int = 200
) -> Iterator[ArchivedSession]:
    """Every session of ``run_id`` (running ones too) with all stored of it, by id."""
    names = usernames(db)
    query = select(SessionRow.id).where(SessionRow.run_id == run_id).order_by(SessionRow.id)
    for chunk in scalar_chunks(db, query, batch_size):
        answers = _by_session(questionnaire_answers(db, chunk))
        with db.session() as s:
            yield from _archived(s, chunk, names, answers)


def _archived(
    s: Session,
    ids: Sequence[str],
    names: dict[int, str],
    answers: dict[str, list[NewQuestionnaireAnswer]],
) -> list[ArchivedSession]:
    passes = _by_session(
        s.scalars(
            select(AnnotationPassRow)
            .where(AnnotationPassRow.session_id.in_(ids))
            .options(selectinload(AnnotationPassRow.answers))
            .order_by(AnnotationPassRow.id)
        )
    )
    consensus = _by_session(
        s.scalars(
            select(AnnotationConsensusRow)
            .where(AnnotationConsensusRow.session_id.in_(ids))
            .order_by(AnnotationConsensusRow.id)
        )
    )
    resolutions = _by_session(
        s.scalars(
            select(ResolutionRow)
            .where(ResolutionRow.session_id.in_(ids))
            .order_by(ResolutionRow.id)
        )
    )
    rows = s.scalars(
        select(SessionRow)
        .where(SessionRow.id.in_(ids))
        .options(selectinload(SessionRow.turns))
        .order_by(SessionRow.id)
    )
    return [
        ArchivedSession(
            id=row.id,
            work_key=row.work_key,
            application=row.application.name,
            scenario=row.scenario,
            level=Level(row.level),
            source=SessionSource(row.source),
            status=SessionStatus(row.status),
            end_reason=EndReason(row.end_reason) if row.end_reason else None,
            end_detail=row.end_detail,
            provenance=row.provenance,
            persona=row.persona,
            strategy=row.strategy,
            first_success_turn=row.first_success_turn,
            tester=_name(names, row.tester_id),
            started_at=as_utc(row.started_at),
            ended_at=_utc(row.ended_at),
            simulator_calls=row.simulator_calls,
            simulator_prompt_tokens=row.simulator_prompt_tokens,
            simulator_completion_tokens=row.simulator_completion_tokens,
            turns=tuple(
                TurnRecord(
                    index=turn.idx,
                    user_text=turn.user_text,
                    response_text=turn.response_text,
                    error=turn.error,
                    latency_ms=turn.latency_ms,
                    prompt_tokens=turn.prompt_tokens,
                    completion_tokens=turn.completion_tokens,
                    created_at=as_utc(turn.created_at),
                    meta=turn.meta,
                    messages=messages_from_column(turn.messages),
                )
                for turn in row.turns
            ),
            questionnaire=tuple(
                ArchivedQuestionnaireAnswer(
                    item_id=answer.item_id,
                    respondent=_person_respondent(answer, names),
                    simulated=answer.simulated,
                    value=answer.value,
                    text=answer.text,
                    provenance=answer.provenance,
                    created_at=as_utc(answer.created_at),
                )
                for answer in answers.get(row.id, [])
            ),
            passes=tuple(_pass(found, names) for found in passes.get(row.id, [])),
            consensus=tuple(
                ArchivedConsensus(
                    category=found.category,
                    annotator=found.annotator,
                    question_id=found.question_id,
                    turn_index=found.turn_index,
                    value=found.value_num,
                    text=found.value_text,
                    method=found.method,
                    n_runs=found.n_runs,
                    flip_rate=found.flip_rate,
                )
                for found in consensus.get(row.id, [])
            ),
            resolutions=tuple(
                ArchivedResolution(
                    category=found.category,
                    question_id=found.question_id,
                    turn_index=found.turn_index,
                    status=found.status,
                    value=found.value_num,
                    text=found.value_text,
                    note=found.note,
                    resolved_by=_name(names, found.resolved_by),
                    created_at=as_utc(found.created_at),
                )
                for found in resolutions.get(row.id, [])
            ),
        )
        for row in rows
    ]


def _pass(row: AnnotationPassRow, names: dict[int, str]) -> ArchivedPass:
    return ArchivedPass(
        category=row.category,
        annotator=row.annotator,
        annotator_kind=row.annotator_kind,
        pass_no=row.pass_no,
        repeat_no=row.repeat_no,
        status=row.status,
        error=row.error,
        flagged=row.flagged,
        note=row.note,
        provenance=row.provenance,
        account=_name(names, row.user_id),
        created_at=as_utc(row.created_at),
        model_calls=row.model_calls,
        prompt_tokens=row.prompt_tokens,
        completion_tokens=row.completion_tokens,
        answers=tuple(
            ArchivedPassAnswer(
                question_id=answer.question_id,
                turn_index=answer.turn_index,
                value=answer.value_num,
                text=answer.value_text,
                reasoning=answer.reasoning,
            )
            for answer in sorted(row.answers, key=lambda answer: answer.id)
        ),
    )


def _person_respondent(answer: NewQuestionnaireAnswer, names: dict[int, str]) -> str:
    """A person's ``user:<account id>`` as ``user:<username>`` (ids are one database's)."""
    named = respondent_name(answer, names)
    return answer.respondent if named == answer.respondent else PERSON_RESPONDENT_PREFIX + named


def _by_session(rows: Iterable[RowT]) -> dict[str, list[RowT]]:
    found: dict[str, list[RowT]] = {}
    for row in rows:
        found.setdefault(row.session_id, []).append(row)
    return found


def _name(names: dict[int, str], account: int | None) -> str | None:
    return None if account is None else names.get(account, str(account))


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else as_utc(moment)
