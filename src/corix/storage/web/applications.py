"""Applications of a series: registration, the admin's overview, lifecycle and credentials.

Editing an application registers a new row (a new version); the old one is retired and
points to its successor, so sessions keep naming the version they talked to. Credentials
leave storage only for the server process that opens the application.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sqlalchemy import func, select, update
from sqlalchemy.orm import aliased

from corix.domain import JsonObject
from corix.storage.clock import utcnow
from corix.storage.database import Database
from corix.storage.orm import ApplicationRow, SessionRow, TurnRow
from corix.storage.orm_web import ApplicationOptionsRow, ApplicationStatusRow, AssignmentRow
from corix.storage.transactions import Transaction, transaction

__all__ = [
    "MAX_ERROR_CHARS",
    "ApplicationInfo",
    "ApplicationLaunch",
    "CheckedStep",
    "RegistrationCheck",
    "Retired",
    "active_application_ids",
    "add_application",
    "application_series",
    "auth",
    "launch",
    "overview",
    "replace_application",
    "retire",
]

MAX_ERROR_CHARS = 300
UNSTARTED = "assigned"
"""The status of an assignment whose tester has not started (see the tester's flow)."""


@dataclass(frozen=True)
class ApplicationInfo:
    """An application as the admin sees it. Credentials are reported as present, never shown."""

    id: int
    name: str
    spec: str
    options: JsonObject
    has_credentials: bool
    version: str | None = None
    retired: bool = False
    replaced_by: str | None = None
    failed_sessions: int = 0
    """Sessions in which the application failed to answer at least once."""
    last_error: str | None = None
    check: RegistrationCheck | None = None
    """The report of its registration check (``None``: registered outside the web, unchecked)."""

    @property
    def active(self) -> bool:
        return not self.retired


@dataclass(frozen=True, slots=True)
class CheckedStep:
    name: str
    ms: float
    ok: bool


@dataclass(frozen=True, slots=True)
class RegistrationCheck:
    """How the check that registering an application runs went, kept with its status."""

    ok: bool
    steps: tuple[CheckedStep, ...]

    def column(self) -> JsonObject:
        return {"ok": self.ok, "steps": [asdict(step) for step in self.steps]}

    @classmethod
    def from_column(cls, stored: JsonObject | None) -> RegistrationCheck | None:
        """The check its column holds (empty: none was run)."""
        if not stored:
            return None
        steps = tuple(CheckedStep(**step) for step in stored.get("steps", ()))
        return cls(ok=bool(stored["ok"]), steps=steps)


@dataclass(frozen=True, slots=True)
class ApplicationLaunch:
    """What the server needs to open an application: never sent to a browser."""

    spec: str
    options: JsonObject
    auth: JsonObject | None


def overview(db: Database, evaluation_id: str) -> list[ApplicationInfo]:
    """Every application of the series, retired ones included, by name."""
    successor = aliased(ApplicationRow)
    with transaction(db) as tx:
        rows = tx.execute(
            select(
                ApplicationRow,
                ApplicationOptionsRow.options,
                ApplicationStatusRow.retired_at,
                ApplicationStatusRow.check,
                successor.name,
            )
            .outerjoin(
                ApplicationOptionsRow, ApplicationOptionsRow.application_id == ApplicationRow.id
            )
            .outerjoin(
                ApplicationStatusRow, ApplicationStatusRow.application_id == ApplicationRow.id
            )
            .outerjoin(successor, successor.id == ApplicationStatusRow.replaced_by)
            .where(ApplicationRow.evaluation_id == evaluation_id)
            .order_by(ApplicationRow.name)
        ).all()
        failures = _failures(tx, [row.id for row, *_ in rows])
        return [
            ApplicationInfo(
                id=row.id,
                name=row.name,
                spec=row.spec,
                options=options or {},
                has_credentials=bool(row.auth),
                version=row.version,
                retired=retired_at is not None,
                replaced_by=replaced_by,
                failed_sessions=failures.get(row.id, (0, None))[0],
                last_error=failures.get(row.id, (0, None))[1],
                check=RegistrationCheck.from_column(check),
            )
            for row, options, retired_at, check, replaced_by in rows
        ]


def _failures(tx: Transaction, application_ids: list[int]) -> dict[int, tuple[int, str | None]]:
    """Application id → (sessions with a failed turn, the latest failure's text)."""
    if not application_ids:
        return {}
    counts = tx.execute(
        select(
            SessionRow.application_id,
            func.count(func.distinct(SessionRow.id)),
            func.max(TurnRow.id),
        )
        .join(TurnRow, TurnRow.session_id == SessionRow.id)
        .where(SessionRow.application_id.in_(application_ids), TurnRow.error.is_not(None))
        .group_by(SessionRow.application_id)
    ).all()
    last_turns = [last for _, _, last in counts]
    latest: dict[int, str | None] = dict(
        tx.execute(select(TurnRow.id, TurnRow.error).where(TurnRow.id.in_(last_turns)))
        .tuples()
        .all()
    )
    return {
        application_id: (sessions, (latest.get(last) or "")[:MAX_ERROR_CHARS] or None)
        for application_id, sessions, last in counts
    }


def active_application_ids(tx: Transaction, evaluation_id: str) -> list[int]:
    """The series' applications not retired, by id."""
    return list(
        tx.scalars(
            select(ApplicationRow.id)
            .outerjoin(
                ApplicationStatusRow, ApplicationStatusRow.application_id == ApplicationRow.id
            )
            .where(
                ApplicationRow.evaluation_id == evaluation_id,
                ApplicationStatusRow.retired_at.is_(None),
            )
            .order_by(ApplicationRow.id)
        )
    )


def add_application(
    tx: Transaction,
    evaluation_id: str,
    *,
    name: str,
    spec: str,
    options: JsonObject,
    auth: JsonObject | None,
    version: str | None,
    check: RegistrationCheck | None,
) -> int:
    """Register an application of the series with its check; a taken name raises
    :class:`~corix.storage.web.Duplicate` when the unit of work commits."""
    row = ApplicationRow(
        name=name, spec=spec, auth=auth, evaluation_id=evaluation_id, version=version
    )
    tx.add(row)
    tx.flush()
    tx.add(ApplicationOptionsRow(application_id=row.id, options=options))
    tx.add(ApplicationStatusRow(application_id=row.id, check=check.column() if check else {}))
    return row.id


def application_series(db: Database, application_id: int) -> str | None:
    """The series an application belongs to (``None``: unknown, or not a series' own)."""
    with transaction(db) as tx:
        row = tx.get(ApplicationRow, application_id)
        return None if row is None else row.evaluation_id


def auth(db: Database, application_id: int) -> JsonObject | None:
    """The application's stored credentials, for the server to open it with."""
    with transaction(db) as tx:
        row = tx.get(ApplicationRow, application_id)
        return None if row is None else row.auth


def launch(db: Database, application_id: int) -> ApplicationLaunch | None:
    with transaction(db) as tx:
        row = tx.get(ApplicationRow, application_id)
        if row is None:
            return None
        extra = tx.get(ApplicationOptionsRow, application_id)
        return ApplicationLaunch(row.spec, extra.options if extra else {}, row.auth)


def _status(tx: Transaction, application_id: int) -> ApplicationStatusRow | None:
    """The application's lifecycle row, made on first use for applications registered bare;
    ``None`` when there is no such application."""
    if tx.get(ApplicationRow, application_id) is None:
        return None
    status = tx.scalars(
        select(ApplicationStatusRow).where(ApplicationStatusRow.application_id == application_id)
    ).first()
    if status is None:
        status = ApplicationStatusRow(application_id=application_id, check={})
        tx.add(status)
    return status


def retire(db: Database, application_id: int) -> int | None:
    """Retire an application and withdraw its unstarted assignments, closing the gaps in
    their testers' numbering; return how many were withdrawn (``None``: no application)."""
    with transaction(db) as tx:
        status = _status(tx, application_id)
        if status is None:
            return None
        if status.retired_at is None:
            status.retired_at = utcnow()
        withdrawn = list(
            tx.scalars(
                select(AssignmentRow).where(
                    AssignmentRow.application_id == application_id,
                    AssignmentRow.status == UNSTARTED,
                    AssignmentRow.session_id.is_(None),
                )
            )
        )
        for row in withdrawn:
            tx.delete(row)
        tx.flush()
        # Testers number their sessions 1, 2, 3 …: close the gaps, keeping the order.
        for user_id in {row.user_id for row in withdrawn}:
            remaining = tx.scalars(
                select(AssignmentRow)
                .where(AssignmentRow.user_id == user_id)
                .order_by(AssignmentRow.position)
            )
            for position, row in enumerate(remaining, start=1):
                row.position = position
        return len(withdrawn)


class Retired(Exception):
    """The application to replace is unknown or was retired meanwhile (nothing is stored)."""


def replace_application(tx: Transaction, old_id: int, new_id: int) -> None:
    """Retire ``old_id`` in favour of ``new_id``; testers who have not started meet the new
    version instead. Raises :class:`Retired` when ``old_id`` is retired or unknown."""
    status = _status(tx, old_id)
    if status is None or status.retired_at is not None:
        raise Retired(old_id)
    status.retired_at = utcnow()
    status.replaced_by = new_id
    tx.execute(
        update(AssignmentRow)
        .where(
            AssignmentRow.application_id == old_id,
            AssignmentRow.status == UNSTARTED,
            AssignmentRow.session_id.is_(None),
        )
        .values(application_id=new_id)
    )
