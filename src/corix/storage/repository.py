"""Reads and small writes over the stored record, returning domain models."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, selectinload

from corix.domain import (
    EndReason,
    Level,
    Provenance,
    QuestionnaireAnswer,
    RunSummary,
    SessionRecord,
    SessionSource,
    SessionStatus,
    TurnRecord,
)
from corix.errors import CorixError
from corix.scenarios import PackRecord
from corix.storage.clock import utcnow
from corix.storage.database import Database, scalar_chunks
from corix.storage.orm import (
    ApplicationRow,
    EvaluationRow,
    QuestionnaireResponseRow,
    RunRow,
    SessionRow,
    TurnRow,
)
from corix.storage.runs import NewRun, create_run
from corix.storage.store_records import ApplicationRecord, RunRecord
from corix.storage.text import storable_text
from corix.storage.transactions import NotFoundError


def _session_record(row: SessionRow) -> SessionRecord:
    return SessionRecord(
        id=row.id,
        run_id=row.run_id,
        application=row.application.name,
        scenario=row.scenario,
        level=Level(row.level),
        source=SessionSource(row.source),
        status=SessionStatus(row.status),
        end_reason=EndReason(row.end_reason) if row.end_reason else None,
        end_detail=row.end_detail,
        provenance=Provenance.model_validate(row.provenance),
        persona=row.persona,
        strategy=row.strategy,
        first_success_turn=row.first_success_turn,
        started_at=row.started_at,
        ended_at=row.ended_at,
        turns=[
            TurnRecord(
                index=turn.idx,
                user_text=turn.user_text,
                response_text=turn.response_text,
                error=turn.error,
                latency_ms=turn.latency_ms,
                prompt_tokens=turn.prompt_tokens,
                completion_tokens=turn.completion_tokens,
                created_at=turn.created_at,
                meta=turn.meta,
            )
            for turn in row.turns
        ],
    )


def run_record(row: RunRow) -> RunRecord:
    return RunRecord(
        id=row.id,
        name=row.name,
        evaluation_id=row.evaluation_id,
        plan=row.plan,
        seed=row.seed,
        status=row.status,
        summary=RunSummary.model_validate(row.summary),
        created_at=row.created_at,
        finished_at=row.finished_at,
        lease_holder=row.lease_holder,
        lease_heartbeat_at=row.lease_heartbeat_at,
    )


VERSION_SUFFIX = re.compile(r"\s+v(\d+)$")
VERSION_CHARS = 200
"""The longest application version stored (the column's width)."""


def _version_base(name: str) -> str:
    found = VERSION_SUFFIX.search(name)
    return name[: found.start()] if found else name


def next_version_name(name: str, taken: set[str]) -> str:
    """``Acme`` → ``Acme v2``, ``Acme v2`` → ``Acme v3``, skipping names already in use."""
    found = VERSION_SUFFIX.search(name)
    base = name[: found.start()] if found else name
    number = int(found.group(1)) + 1 if found else 2
    while f"{base} v{number}" in taken:
        number += 1
    return f"{base} v{number}"


def web_conflict_message(name: str, evaluation: str) -> str:
    return (
        f"application '{name}' belongs to the web evaluation '{evaluation}' with another "
        "spec; give this plan's application another name"
    )


def _family(s: Session, name: str) -> list[ApplicationRow]:
    """Every version of the application ``name`` names (``Acme``, ``Acme v2``…), whichever
    of them it names."""
    base = _version_base(name)
    named = s.scalars(
        select(ApplicationRow).where(
            (ApplicationRow.name == base) | ApplicationRow.name.like(f"{base} v%")
        )
    ).all()
    return [row for row in named if _version_base(row.name) == base]


def spec_change_message(name: str, same_spec: str | None) -> str:
    where = f"; its version with this spec is '{same_spec}': name that one" if same_spec else ""
    return (
        f"application '{name}' is stored with another spec{where}, or set "
        "'new_version: true' on it in the plan to register this spec as a new version"
    )


def _web_owner(s: Session, application: ApplicationRow | None) -> str | None:
    """The name of the web evaluation ``application`` belongs to, if it belongs to one."""
    if application is None or application.evaluation_id is None:
        return None
    evaluation = s.get(EvaluationRow, application.evaluation_id)
    return evaluation.name if evaluation is not None else application.evaluation_id


class Repository:
    """Query helpers over one :class:`Database`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- applications --------------------------------------------------------------------
    def ensure_application(
        self,
        name: str,
        spec: str,
        *,
        version: str | None = None,
        auth: dict[str, Any] | None = None,
        new_version: bool = False,
    ) -> int:
        """The id of the application ``name`` with ``spec``, registered if need be.

        Any version runs by its name (``Acme v2``). A stored application is never
        rewritten: the same name with another spec is refused (:class:`CorixError`) unless
        ``new_version``, which registers the spec as the family's next version (``<name>
        v2``, ``v3``…) or reuses the version that already has it, so sessions already
        stored keep the application they used. An application that belongs to a web
        evaluation is never reused with another spec either: that is an error naming both.
        """
        if version is not None:  # what the application says it is: untrusted, bounded
            version = storable_text(version)[:VERSION_CHARS]
        with self.db.session() as s:
            family = _family(s, name)
            current = next((row for row in family if row.name == name), None)
            same = [row for row in family if row.spec == spec]
            if current is not None and current.spec != spec and not new_version:
                owner = _web_owner(s, current)
                if owner is not None:
                    raise CorixError(web_conflict_message(name, owner))
                raise CorixError(spec_change_message(name, same[-1].name if same else None))
            if current is not None and current.spec == spec:
                same = [current]
            if same:
                row = max(same, key=lambda r: r.id)
                if row.evaluation_id is None:
                    row.version = version or row.version
                    if auth is not None:
                        row.auth = auth
                return row.id
            owner = _web_owner(s, current)
            if owner is not None:
                raise CorixError(web_conflict_message(name, owner))
            taken = {row.name for row in family}
            new_name = name if current is None else next_version_name(name, taken)
            row = ApplicationRow(name=new_name, spec=spec, version=version, auth=auth)
            s.add(row)
            s.flush()
            return row.id

    def application_conflict(self, name: str, spec: str, *, new_version: bool) -> str | None:
        """Why :meth:`ensure_application` would refuse ``name`` with ``spec``, or ``None``."""
        with self.db.session() as s:
            family = _family(s, name)
            current = next((row for row in family if row.name == name), None)
            if current is None or current.spec == spec:
                return None
            owner = _web_owner(s, current)
            if owner is not None:
                return web_conflict_message(name, owner)
            if new_version:
                return None
            same = [row.name for row in family if row.spec == spec]
            return spec_change_message(name, same[-1] if same else None)

    def applications(self) -> list[ApplicationRecord]:
        with self.db.session() as s:
            rows = s.scalars(select(ApplicationRow).order_by(ApplicationRow.name))
            return [
                ApplicationRecord(
                    row.id, row.name, row.spec, row.version, row.evaluation_id, row.created_at
                )
                for row in rows
            ]

    # -- runs ----------------------------------------------------------------------------
    def create_run(
        self,
        run_id: str,
        *,
        name: str,
        plan: dict[str, Any],
        seed: int,
        packs: Iterable[PackRecord] = (),
    ) -> None:
        """Store a new run with the scenario packs it uses, in one transaction."""
        with self.db.session() as s:
            create_run(s, NewRun(run_id, name, plan, seed=seed, packs=tuple(packs)))

    def get_run(self, run_id: str) -> RunRecord:
        with self.db.session() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                known = list(s.scalars(select(RunRow.id).order_by(RunRow.created_at)))
                raise NotFoundError(
                    f"no run '{run_id}'. Known runs: {', '.join(known[-10:]) or 'none'}"
                )
            return run_record(row)

    def list_runs(self) -> list[RunRecord]:
        with self.db.session() as s:
            return [
                run_record(row) for row in s.scalars(select(RunRow).order_by(RunRow.created_at))
            ]

    def run_applications(self, run_id: str) -> set[str]:
        """The names of the applications the run's sessions talked to."""
        query = (
            select(ApplicationRow.name)
            .join(SessionRow, SessionRow.application_id == ApplicationRow.id)
            .where(SessionRow.run_id == run_id)
            .distinct()
        )
        with self.db.session() as s:
            return set(s.scalars(query))

    def set_run_status(
        self, run_id: str, status: str, *, summary: RunSummary | None = None
    ) -> None:
        with self.db.session() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise NotFoundError(f"no run '{run_id}'")
            row.status = status
            if summary is not None:
                row.summary = summary.model_dump(mode="json")
            row.finished_at = utcnow() if status == "complete" else None

    def completed_work_keys(self, run_id: str) -> set[str]:
        with self.db.session() as s:
            keys = s.scalars(
                select(SessionRow.work_key).where(
                    SessionRow.run_id == run_id, SessionRow.status == "complete"
                )
            )
            return {key for key in keys if key is not None}

    def discard_incomplete_sessions(
        self, run_id: str, work_keys: Collection[str] | None = None
    ) -> int:
        """Delete sessions a killed run (or only the work items ``work_keys`` of a dead
        worker) left half-done, so that they are redone whole.

        Applications keep dialogue state that cannot be rebuilt, so a half-finished dialogue
        is restarted from its first turn rather than continued.
        """
        query = select(SessionRow.id).where(
            SessionRow.run_id == run_id, SessionRow.status != "complete"
        )
        if work_keys is not None:
            query = query.where(SessionRow.work_key.in_(list(work_keys)))
        with self.db.session() as s:
            ids = list(s.scalars(query))
            if ids:
                s.execute(delete(TurnRow).where(TurnRow.session_id.in_(ids)))
                s.execute(
                    delete(QuestionnaireResponseRow).where(
                        QuestionnaireResponseRow.session_id.in_(ids)
                    )
                )
                s.execute(delete(SessionRow).where(SessionRow.id.in_(ids)))
            return len(ids)

    def run_counts(self, run_id: str) -> dict[str, int]:
        with self.db.session() as s:
            sessions = s.scalar(
                select(func.count()).select_from(SessionRow).where(SessionRow.run_id == run_id)
            )
            turns = s.scalar(
                select(func.count())
                .select_from(TurnRow)
                .join(SessionRow, SessionRow.id == TurnRow.session_id)
                .where(SessionRow.run_id == run_id)
            )
            errors = s.scalar(
                select(func.count())
                .select_from(TurnRow)
                .join(SessionRow, SessionRow.id == TurnRow.session_id)
                .where(SessionRow.run_id == run_id, TurnRow.error.is_not(None))
            )
            return {"sessions": sessions or 0, "turns": turns or 0, "error_turns": errors or 0}

    # -- sessions ------------------------------------------------------------------------
    def load_session(self, session_id: str) -> SessionRecord:
        with self.db.session() as s:
            row = s.scalars(
                select(SessionRow)
                .where(SessionRow.id == session_id)
                .options(selectinload(SessionRow.turns))
            ).first()
            if row is None:
                raise NotFoundError(f"no session '{session_id}'")
            return _session_record(row)

    def complete_sessions(self, run_ids: Sequence[str]) -> int:
        """How many complete sessions ``run_ids`` hold: what an export walks."""
        with self.db.session() as s:
            count = s.scalar(
                select(func.count())
                .select_from(SessionRow)
                .where(SessionRow.run_id.in_(list(run_ids)), SessionRow.status == "complete")
            )
            return count or 0

    def iter_sessions(
        self,
        run_id: str | None = None,
        *,
        session_ids: Sequence[str] | None = None,
        batch_size: int = 500,
    ) -> Iterator[SessionRecord]:
        """Stream complete sessions in a stable order, a batch at a time (flat memory)."""
        query = select(SessionRow.id).where(SessionRow.status == "complete")
        if run_id is not None:
            query = query.where(SessionRow.run_id == run_id)
        if session_ids is not None:
            query = query.where(SessionRow.id.in_(list(session_ids)))
        for chunk in scalar_chunks(self.db, query.order_by(SessionRow.id), batch_size):
            with self.db.session() as s:
                rows = s.scalars(
                    select(SessionRow)
                    .where(SessionRow.id.in_(chunk))
                    .options(selectinload(SessionRow.turns))
                    .order_by(SessionRow.id)
                )
                records = [_session_record(row) for row in rows]
            yield from records

    def questionnaire(self, session_id: str) -> list[QuestionnaireAnswer]:
        return self.questionnaires([session_id]).get(session_id, [])

    def questionnaires(self, session_ids: Sequence[str]) -> dict[str, list[QuestionnaireAnswer]]:
        """The questionnaire answers of several sessions in one query, keyed by session."""
        found: dict[str, list[QuestionnaireAnswer]] = {}
        with self.db.session() as s:
            rows = s.scalars(
                select(QuestionnaireResponseRow)
                .where(QuestionnaireResponseRow.session_id.in_(list(session_ids)))
                .order_by(QuestionnaireResponseRow.id)
            )
            for r in rows:
                found.setdefault(r.session_id, []).append(
                    QuestionnaireAnswer(item_id=r.item_id, value=r.value_num, text=r.value_text)
                )
        return found
