"""Runs a plan: open the applications, plan the work items, execute them, store everything."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from corix.apps import AdapterSpec, build_application
from corix.config.json_inputs import json_object_from_env
from corix.errors import CorixError
from corix.execution.context import (
    LEVEL_PLANNERS,
    WORK_HANDLERS,
    OpenedApplication,
    RunContext,
    RunStats,
)
from corix.execution.local import LocalExecutor
from corix.execution.plan import ApplicationEntry, Plan
from corix.execution.work import WorkItem
from corix.llm import LLMClient
from corix.storage import Database, RecordWriter, Repository
from corix.testing import levels  # noqa: F401 - registers the built-in levels
from corix.testing.packs import ScenarioPack, resolve_pack
from corix.testing.simulation import open_simulators


@dataclass
class RunResult:
    run_id: str
    stats: dict[str, Any]
    skipped: int
    discarded: int


def new_run_id() -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"run-{stamp}-{secrets.token_hex(2)}"


def auth_for(entry: ApplicationEntry) -> dict[str, Any] | None:
    if entry.auth_env is None:
        return None
    credentials = json_object_from_env(entry.auth_env)
    if credentials is None:
        raise CorixError(
            f"application '{entry.name}' needs credentials in ${entry.auth_env}, which is unset"
        )
    return credentials


def load_packs(plan: Plan) -> dict[str, ScenarioPack]:
    packs: dict[str, ScenarioPack] = {}
    for scenario in plan.scenarios:
        pack = resolve_pack(plan.resolve_scenario(scenario))
        packs[pack.name] = pack
    return packs


def plan_work(
    plan: Plan, packs: dict[str, ScenarioPack], run_id: str, done: set[str]
) -> Iterator[WorkItem]:
    """The plan's work items not yet done, generated lazily so memory stays flat."""
    for level, settings in plan.levels.items():
        for item in LEVEL_PLANNERS.get(level.value)(plan, settings, packs, run_id):
            if item.key not in done:
                yield item


async def open_applications(plan: Plan, repo: Repository) -> dict[str, OpenedApplication]:
    opened: dict[str, OpenedApplication] = {}
    try:
        for entry in plan.applications:
            app = build_application(entry.spec, entry.options)
            await app.open(auth_for(entry))
            version = await app.version()
            public_spec = AdapterSpec.parse(entry.spec).public()
            db_id = repo.ensure_application(entry.name, public_spec, version=version)
            opened[entry.name] = OpenedApplication(
                entry.name, public_spec, app, version, db_id, app.provenance_parameters()
            )
    except BaseException:
        for done in opened.values():
            await done.app.close()
        raise
    return opened


def model_call_totals(
    applications: Mapping[str, OpenedApplication], simulators: Mapping[str, LLMClient]
) -> dict[str, int | float]:
    """Calls, retries and cost through the client layer, by applications and simulators.

    Application tokens are already counted from their replies; simulator tokens are not.
    """
    app_usage = [u.total for a in applications.values() if (u := a.app.usage()) is not None]
    simulator_usage = [client.usage.snapshot().total for client in simulators.values()]
    every = app_usage + simulator_usage
    return {
        "model_calls": sum(u.calls for u in every),
        "retries": sum(u.retries for u in every),
        "cache_hits": sum(u.cache_hits for u in every),
        "failed_calls": sum(u.errors for u in every),
        "simulator_prompt_tokens": sum(u.prompt_tokens for u in simulator_usage),
        "simulator_completion_tokens": sum(u.completion_tokens for u in simulator_usage),
        "cost": round(sum(u.cost for u in every), 6),
    }


async def execute_plan(
    plan: Plan,
    db: Database,
    *,
    resume_run: str | None = None,
    on_planned: Callable[[int], None] | None = None,
    on_session_done: Callable[[WorkItem], None] | None = None,
    simulators: Mapping[str, LLMClient] | None = None,
) -> RunResult:
    """Run ``plan`` (or finish run ``resume_run``) and return its summary.

    Resuming drops the sessions a killed run left half-done and runs every work item whose
    session is not complete, so the finished run has each item exactly once.
    ``simulators`` (keyed by level) replace the clients that would be opened for levels
    played by the LLM engine; they stay open, as they belong to the caller.
    """
    repo = Repository(db)
    discarded = 0
    done: set[str] = set()
    if resume_run is not None:
        run = repo.get_run(resume_run)
        plan = Plan.model_validate(run.plan)
        run_id = run.id
        discarded = repo.discard_incomplete_sessions(run_id)
        done = repo.completed_work_keys(run_id)
        repo.set_run_status(run_id, "running")
    else:
        run_id = new_run_id()
    packs = load_packs(plan)
    planned = sum(1 for _ in plan_work(plan, packs, run_id, done))
    if resume_run is None:
        repo.create_run(run_id, name=plan.name, plan=plan.model_dump(mode="json"), seed=plan.seed)
    if on_planned is not None:
        on_planned(planned)
    given = dict(simulators or {})
    opened = open_simulators(plan, skip=given)  # connect lazily: nothing to close on failure
    applications = await open_applications(plan, repo)
    stats = RunStats()
    status = "interrupted"
    try:
        async with RecordWriter(db) as writer:
            ctx = RunContext(
                run_id=run_id,
                plan=plan,
                applications=applications,
                packs=packs,
                writer=writer,
                stats=stats,
                simulators={**opened, **given},
                on_session_done=on_session_done,
            )

            async def handle(item: WorkItem) -> None:
                await WORK_HANDLERS.get(item.kind)(item, ctx)

            await LocalExecutor(plan.concurrency).run(plan_work(plan, packs, run_id, done), handle)
        status = "complete"
    finally:
        for application in applications.values():
            await application.app.close()
        for client in opened.values():
            await client.aclose()
        summary = {
            **stats.as_dict(),
            **model_call_totals(applications, {**opened, **given}),
            **repo.run_counts(run_id),
        }
        repo.set_run_status(run_id, status, summary=summary)
    return RunResult(run_id=run_id, stats=summary, skipped=len(done), discarded=discarded)
