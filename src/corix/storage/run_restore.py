"""A run file's records stored back as rows: the same run, in one transaction.

The run keeps its id and its sessions theirs, so a run is stored once per database: a
second import of the same file is refused, naming the run already there (delete it first
to import again). Applications are matched by name and spec (a stored application of that
name with another spec gets the next version name, as any import does); people by
username (an account this database does not have leaves the reference empty, and a person
respondent keeps ``user:<username>``). The run joins no web series here. Nothing is
stored unless every session is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import insert, select

from corix.domain import (
    ArchivedApplication,
    ArchivedPass,
    ArchivedQuestionnaireAnswer,
    ArchivedSession,
    RunDocument,
    run_plan_json,
)
from corix.errors import CorixError
from corix.storage.applications import next_version_name
from corix.storage.database import Database
from corix.storage.orm import (
    AnnotationAnswerRow,
    AnnotationConsensusRow,
    AnnotationJobRow,
    AnnotationPassRow,
    ApplicationRow,
    Base,
    QuestionnaireResponseRow,
    ResolutionRow,
    RunPackRow,
    RunRow,
    SessionRow,
    WrittenReportRow,
)
from corix.storage.orm_web import UserRow
from corix.storage.people import PERSON_RESPONDENT_PREFIX
from corix.storage.sessions import NewTurn, add_turns
from corix.storage.text import Columns
from corix.storage.transactions import Transaction, transaction

__all__ = ["RestoredRun", "RunAlreadyStored", "restore_run"]

_BATCH = 200
"""Sessions inserted at once: a few statements per batch, and memory stays flat."""


class RunAlreadyStored(CorixError):
    """The run, or one of its sessions, is already in the database."""


@dataclass(frozen=True)
class RestoredRun:
    run_id: str
    sessions: int
    renamed_applications: dict[str, str] = field(default_factory=dict)
    """Applications stored here under another name (one of that name has another spec)."""


def restore_run(
    db: Database, document: RunDocument, sessions: Iterable[ArchivedSession]
) -> RestoredRun:
    """Store ``document``'s run and ``sessions`` (read lazily: an error while reading them
    rolls everything back)."""
    with transaction(db) as tx:
        _refuse_stored_run(tx, document)
        applications = _application_ids(tx, document.applications)
        _add_run(tx, document)
        accounts = dict(tx.execute(select(UserRow.username, UserRow.id)).tuples().all())
        count, batch = 0, []
        for session in sessions:
            if session.application not in applications:
                raise CorixError(
                    f"session '{session.id}' names application '{session.application}', "
                    "which the file's header does not list"
                )
            batch.append(session)
            count += 1
            if len(batch) >= _BATCH:
                _add_sessions(tx, document.run.id, batch, applications, accounts)
                batch = []
        _add_sessions(tx, document.run.id, batch, applications, accounts)
    renamed = {name: stored for name, (_, stored) in applications.items() if stored != name}
    return RestoredRun(document.run.id, count, renamed)


def _refuse_stored_run(tx: Transaction, document: RunDocument) -> None:
    stored = tx.get(RunRow, document.run.id)
    if stored is not None:
        raise RunAlreadyStored(
            f"run '{stored.id}' ('{stored.name}') is already in this database: this file "
            f"was imported before. Delete it first (corix runs delete {stored.id}) to "
            "import it again"
        )


def _application_ids(
    tx: Transaction, applications: Sequence[ArchivedApplication]
) -> dict[str, tuple[int, str]]:
    """Each application's (id, stored name): one of the same name and spec, else new."""
    found: dict[str, tuple[int, str]] = {}
    for application in applications:
        family = list(
            tx.scalars(
                select(ApplicationRow).where(
                    ApplicationRow.evaluation_id.is_(None),
                    (ApplicationRow.name == application.name)
                    | ApplicationRow.name.like(f"{application.name} v%"),
                )
            )
        )
        same = [row for row in family if row.spec == application.spec]
        exact = [row for row in same if row.name == application.name] or same
        if exact:
            found[application.name] = (exact[0].id, exact[0].name)
            continue
        taken = {row.name for row in family}
        name = application.name
        if name in taken:
            name = next_version_name(name, taken)
        row = ApplicationRow(name=name, spec=application.spec, version=application.version)
        tx.add(row)
        tx.flush()
        found[application.name] = (row.id, name)
    return found


def _add_run(tx: Transaction, document: RunDocument) -> None:
    run = document.run
    tx.add(
        RunRow(
            id=run.id,
            name=run.name,
            plan=run_plan_json(run.plan),
            seed=run.seed,
            status=run.status,
            summary=run.summary.model_dump(mode="json"),
            created_at=run.created_at,
            finished_at=run.finished_at,
        )
    )
    tx.flush()
    tx.add_all(RunPackRow(run_id=run.id, **pack.model_dump()) for pack in document.packs)
    tx.add_all(
        AnnotationJobRow(
            run_id=run.id,
            annotator=job.annotator,
            started_at=job.started_at,
            settings=job.settings.model_dump(mode="json"),
        )
        for job in document.annotation_jobs
    )
    tx.add_all(
        WrittenReportRow(
            report_id=report.report_id,
            run_id=run.id,
            written_at=report.written_at,
            digest=report.digest,
            settings=report.settings.model_dump(mode="json"),
        )
        for report in document.reports
    )


def _add_sessions(
    tx: Transaction,
    run_id: str,
    sessions: Sequence[ArchivedSession],
    applications: dict[str, tuple[int, str]],
    accounts: dict[str, int],
) -> None:
    """Insert a batch of sessions and every row that refers to them, table by table."""
    if not sessions:
        return
    ids = [session.id for session in sessions]
    taken = tx.execute(select(SessionRow.id, SessionRow.run_id).where(SessionRow.id.in_(ids)))
    for session_id, other_run in taken:
        raise RunAlreadyStored(
            f"session '{session_id}' is already stored here (in run '{other_run}'): "
            "this file's sessions were imported before"
        )
    sessions_rows = [
        _session_columns(run_id, session, applications[session.application][0], accounts)
        for session in sessions
    ]
    _insert(tx, SessionRow, sessions_rows)
    add_turns(tx, [NewTurn(s.id, turn) for s in sessions for turn in s.turns])
    _insert(
        tx,
        QuestionnaireResponseRow,
        [_answer_columns(s.id, answer, accounts) for s in sessions for answer in s.questionnaire],
    )
    _insert(
        tx,
        AnnotationConsensusRow,
        [
            {
                "session_id": s.id,
                "value_num": found.value,
                "value_text": found.text,
                **found.model_dump(exclude={"value", "text"}),
            }
            for s in sessions
            for found in s.consensus
        ],
    )
    _insert(
        tx,
        ResolutionRow,
        [
            {
                "session_id": s.id,
                "value_num": found.value,
                "value_text": found.text,
                "resolved_by": _account(accounts, found.resolved_by),
                **found.model_dump(exclude={"value", "text", "resolved_by"}),
            }
            for s in sessions
            for found in s.resolutions
        ],
    )
    _add_passes(tx, [(s.id, found) for s in sessions for found in s.passes], accounts)


def _insert(tx: Transaction, table: type[Base], rows: list[Columns]) -> None:
    if rows:
        tx.execute(insert(table), rows)


_SESSION_PARTS = {
    "application", "tester", "turns", "questionnaire", "passes", "consensus", "resolutions",
}  # fmt: skip


def _session_columns(
    run_id: str, session: ArchivedSession, application_id: int, accounts: dict[str, int]
) -> Columns:
    return {
        **session.model_dump(mode="json", exclude=_SESSION_PARTS | {"started_at", "ended_at"}),
        "started_at": session.started_at,
        "ended_at": session.ended_at,
        "run_id": run_id,
        "application_id": application_id,
        "tester_id": _account(accounts, session.tester),
    }


def _answer_columns(
    session_id: str, answer: ArchivedQuestionnaireAnswer, accounts: dict[str, int]
) -> Columns:
    return {
        "session_id": session_id,
        "respondent": _respondent(answer, accounts),
        "simulated": answer.simulated,
        "item_id": answer.item_id,
        "value_num": answer.value,
        "value_text": answer.text,
        "provenance": answer.provenance,
        "created_at": answer.created_at,
    }


def _respondent(answer: ArchivedQuestionnaireAnswer, accounts: dict[str, int]) -> str:
    """``user:<username>`` as this database's ``user:<account id>`` when it has the person."""
    username = answer.respondent.removeprefix(PERSON_RESPONDENT_PREFIX)
    if answer.simulated or username == answer.respondent or username not in accounts:
        return answer.respondent
    return f"{PERSON_RESPONDENT_PREFIX}{accounts[username]}"


def _add_passes(
    tx: Transaction, passes: list[tuple[str, ArchivedPass]], accounts: dict[str, int]
) -> None:
    """The passes, then their answers under the ids the passes got (in input order)."""
    if not passes:
        return
    rows = [
        {
            "session_id": session_id,
            "user_id": _account(accounts, found.account),
            **found.model_dump(exclude={"account", "answers"}),
        }
        for session_id, found in passes
    ]
    returning = insert(AnnotationPassRow).returning(
        AnnotationPassRow.id, sort_by_parameter_order=True
    )
    pass_ids = list(tx.scalars(returning, rows))
    _insert(
        tx,
        AnnotationAnswerRow,
        [
            {
                "pass_id": pass_id,
                "question_id": answer.question_id,
                "turn_index": answer.turn_index,
                "value_num": answer.value,
                "value_text": answer.text,
                "reasoning": answer.reasoning,
            }
            for pass_id, (_, found) in zip(pass_ids, passes, strict=True)
            for answer in found.answers
        ],
    )


def _account(accounts: dict[str, int], username: str | None) -> int | None:
    return None if username is None else accounts.get(username)
