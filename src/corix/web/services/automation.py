"""Automated runs started from the admin pages, executed in the server's event loop.

The run is an ordinary plan run (the same code as ``corix run``), linked to the evaluation
series so that its sessions join the series' queues, progress and reports.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from datetime import UTC, datetime

from pydantic import ValidationError

from corix.domain import ApplicationEntry, Level, LevelSettings, Plan
from corix.errors import CorixError
from corix.execution import LEVEL_PLANNERS, execute_plan
from corix.storage import Database
from corix.storage.web.applications import ApplicationInfo, auth
from corix.storage.web.series import link_run
from corix.web.services.background import BackgroundTasks
from corix.web.services.evaluations import EvaluationInfo
from corix.web.services.service_errors import InputError

log = logging.getLogger(__name__)

AUTH_ENV_PREFIX = "CORIX_WEB_APP_AUTH_"


def automatable_levels(evaluation: EvaluationInfo) -> list[Level]:
    """The series' levels that have an automated planner (model testing, simulated users)."""
    known = set(LEVEL_PLANNERS.names())
    return [level for level in evaluation.levels if level.value in known]


class AutomatedRuns:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._background = BackgroundTasks()

    def start(
        self,
        evaluation: EvaluationInfo,
        applications: list[ApplicationInfo],
        *,
        levels: list[Level],
        sessions: int,
        seed: int,
    ) -> str:
        """Check and schedule a run; return its name. Must be called in the event loop."""
        allowed = automatable_levels(evaluation)
        problems: dict[str, str] = {}
        if not applications:
            problems["levels"] = "register an application first"
        if not levels or any(level not in allowed for level in levels):
            problems["levels"] = (
                f"choose from: {', '.join(level.value for level in allowed) or 'none'}"
            )
        if not 1 <= sessions <= 1000:
            problems["sessions"] = "between 1 and 1000"
        if problems:
            raise InputError("please fix the highlighted fields", problems)
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
        name = f"{evaluation.name} · automated {stamp} {secrets.token_hex(2)}"
        try:
            plan = Plan(
                name=name,
                seed=seed,
                applications=[self._entry(app) for app in applications],
                scenarios=evaluation.scenarios,
                levels={
                    level: LevelSettings(
                        sessions=None if level is Level.MODEL_TESTING else sessions
                    )
                    for level in levels
                },
            )
        except (ValidationError, CorixError) as exc:
            raise InputError(f"the run cannot be planned: {exc}") from None
        self._background.spawn(self._run(plan, evaluation.id))
        return name

    def _entry(self, app: ApplicationInfo) -> ApplicationEntry:
        auth_env = None
        if app.has_credentials:
            # Plans name credentials by environment variable and never hold them; the
            # server hands this process's copy to the runner that way.
            auth_env = f"{AUTH_ENV_PREFIX}{app.id}"
            os.environ[auth_env] = json.dumps(auth(self._db, app.id) or {})
        return ApplicationEntry(
            name=app.name, spec=app.spec, options=app.options, auth_env=auth_env
        )

    async def _run(self, plan: Plan, evaluation_id: str) -> None:
        def link_to_evaluation(_planned: int) -> None:
            link_run(self._db, plan.name, evaluation_id)

        try:
            await execute_plan(plan, self._db, on_planned=link_to_evaluation)
        except Exception:
            log.exception("automated run '%s' failed", plan.name)

    @property
    def running(self) -> int:
        return self._background.running

    async def close(self) -> None:
        await self._background.close()
