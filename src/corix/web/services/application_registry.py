"""Applications with a lifecycle: registered only after a passing check, versioned, retired.

Registration runs :func:`corix.apps.check.check_application`, the check behind
`corix app check`, and refuses a failing application with the step that failed and why.
Editing registers a new version under a new name (``<name> v2``): the old row keeps the
sessions that talked to it, so results never mix two versions, and the old one is retired
pointing to its successor. Retiring withdraws the application's assignments that have not
started; sessions already made stay in the record.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial
from typing import Any

import anyio
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from corix.apps.check import CheckReport, check_application
from corix.errors import CorixError
from corix.storage import Database
from corix.storage.orm import ApplicationRow
from corix.storage.orm_web import ApplicationStatusRow, AssignmentRow
from corix.storage.repository import next_version_name
from corix.web.services.clock import utcnow
from corix.web.services.errors import Conflict, InputError, NotFound
from corix.web.services.evaluations import ApplicationDraft, Evaluations, insert_application


class ApplicationRegistry:
    def __init__(self, db: Database, evaluations: Evaluations, *, check_timeout_s: float) -> None:
        self._db = db
        self._evaluations = evaluations
        self._check_timeout_s = check_timeout_s

    async def register(
        self, evaluation_id: str, *, name: str, spec: str, credentials_json: str
    ) -> int:
        draft = await anyio.to_thread.run_sync(
            partial(
                self._evaluations.draft_application,
                evaluation_id,
                name=name,
                spec=spec,
                credentials_json=credentials_json,
            )
        )
        report = await self.check(draft)
        return await anyio.to_thread.run_sync(
            partial(self._evaluations.add_application, evaluation_id, draft, check=report)
        )

    async def new_version(self, application_id: int, *, spec: str, credentials_json: str) -> int:
        """Check and register an edited application; blank credentials keep the stored ones."""
        evaluation_id, current = await anyio.to_thread.run_sync(
            self._evaluations.application, application_id
        )
        if current.retired:
            raise Conflict("a retired application cannot be edited; register a new one")
        series = await anyio.to_thread.run_sync(self._evaluations.applications, evaluation_id)
        taken = {app.name for app in series}
        draft = await anyio.to_thread.run_sync(
            partial(
                self._evaluations.draft_application,
                evaluation_id,
                name=next_version_name(current.name, taken),
                spec=spec,
                credentials_json=credentials_json,
            )
        )
        if not credentials_json.strip():
            draft = replace(draft, auth=await anyio.to_thread.run_sync(self._auth, application_id))
        report = await self.check(draft)
        return await anyio.to_thread.run_sync(
            self._replace, evaluation_id, application_id, draft, report
        )

    async def check(self, draft: ApplicationDraft) -> CheckReport:
        """Run the application check; raise an input error naming the reason if it fails."""
        try:
            report = await asyncio.wait_for(
                check_application(draft.spec.public(), draft.auth, options=draft.spec.options),
                self._check_timeout_s,
            )
        except TimeoutError:
            reason = f"the check did not finish within {self._check_timeout_s:g} s"
            raise InputError("the application failed its check", {"spec": reason}) from None
        except CorixError as exc:
            raise InputError("the application failed its check", {"spec": str(exc)}) from None
        if not report.ok:
            raise InputError("the application failed its check", {"spec": report.reason})
        return report

    def retire(self, application_id: int) -> int:
        """Retire an application; return how many unstarted assignments were withdrawn."""
        with self._db.session() as s:
            status = _status(s, application_id)
            if status.retired_at is None:
                status.retired_at = utcnow()
            withdrawn = list(
                s.scalars(
                    select(AssignmentRow).where(
                        AssignmentRow.application_id == application_id,
                        AssignmentRow.status == "assigned",
                        AssignmentRow.session_id.is_(None),
                    )
                )
            )
            for row in withdrawn:
                s.delete(row)
            s.flush()
            # Testers number their sessions 1, 2, 3 …: close the gaps, keeping the order.
            for user_id in {row.user_id for row in withdrawn}:
                remaining = s.scalars(
                    select(AssignmentRow)
                    .where(AssignmentRow.user_id == user_id)
                    .order_by(AssignmentRow.position)
                )
                for position, row in enumerate(remaining, start=1):
                    row.position = position
            return len(withdrawn)

    def _auth(self, application_id: int) -> dict[str, Any] | None:
        with self._db.session() as s:
            row = s.get(ApplicationRow, application_id)
            return None if row is None else row.auth

    def _replace(
        self, evaluation_id: str, old_id: int, draft: ApplicationDraft, report: CheckReport
    ) -> int:
        try:
            with self._db.session() as s:
                new_id = insert_application(s, evaluation_id, draft, report)
                status = _status(s, old_id)
                if status.retired_at is not None:
                    raise Conflict("the application was retired meanwhile")
                status.retired_at = utcnow()
                status.replaced_by = new_id
                # Testers who have not started yet meet the new version instead.
                s.execute(
                    update(AssignmentRow)
                    .where(
                        AssignmentRow.application_id == old_id,
                        AssignmentRow.status == "assigned",
                        AssignmentRow.session_id.is_(None),
                    )
                    .values(application_id=new_id)
                )
                return new_id
        except IntegrityError:
            raise InputError(
                f"an application named '{draft.name}' exists already", {"name": "is taken"}
            ) from None


def _status(s: Session, application_id: int) -> ApplicationStatusRow:
    """The application's lifecycle row, made on first use for applications registered bare."""
    if s.get(ApplicationRow, application_id) is None:
        raise NotFound(f"no application {application_id}")
    status = s.scalars(
        select(ApplicationStatusRow).where(ApplicationStatusRow.application_id == application_id)
    ).first()
    if status is None:
        status = ApplicationStatusRow(application_id=application_id, check={})
        s.add(status)
    return status
