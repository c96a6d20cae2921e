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

import anyio

from corix.apps import CheckReport, check_application
from corix.domain import JsonObject
from corix.errors import CorixError
from corix.storage import Database, next_version_name
from corix.storage.web import Duplicate, transaction
from corix.storage.web import applications as store
from corix.web.services.evaluations import ApplicationDraft, Evaluations, insert_application
from corix.web.services.reachability import unreachable
from corix.web.services.service_errors import Conflict, InputError, NotFound


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
        """Run the application check; raise an input error naming the reason if it fails.
        An address that cannot be reached at all is refused at once, in words."""
        reason = await unreachable(draft.spec.public())
        if reason is not None:
            raise InputError("the application cannot be reached", {"spec": reason})
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
        withdrawn = store.retire(self._db, application_id)
        if withdrawn is None:
            raise NotFound(f"no application {application_id}")
        return withdrawn

    def _auth(self, application_id: int) -> JsonObject | None:
        return store.auth(self._db, application_id)

    def _replace(
        self, evaluation_id: str, old_id: int, draft: ApplicationDraft, report: CheckReport
    ) -> int:
        try:
            with transaction(self._db) as tx:
                new_id = insert_application(tx, evaluation_id, draft, report)
                store.replace_application(tx, old_id, new_id)
                return new_id
        except store.Retired:
            raise Conflict("the application was retired meanwhile") from None
        except Duplicate:
            raise InputError(
                f"an application named '{draft.name}' exists already", {"name": "is taken"}
            ) from None
