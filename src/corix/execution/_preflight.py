"""Preflight: everything a run needs is checked before the run exists.

Every adapter spec and option, every environment variable a plan names, every pack, the
level settings and every network endpoint are checked, and all problems are reported at
once, each with the file and line it comes from, so one edit fixes them all. Nothing is
stored and no application is opened: ``corix run --check PLAN`` is exactly this.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from corix.apps import AdapterSpec, build_application
from corix.domain import Plan, PlanFile
from corix.errors import CorixError
from corix.execution.context import LEVEL_PLANNERS
from corix.execution.run_planning import auth_for, plan_work
from corix.llm import require_local_extra, resolve_model_file
from corix.scenarios import ScenarioPack, resolve_pack

__all__ = ["CONNECT_TIMEOUT_S", "CheckedPlan", "PreflightError", "Problem", "preflight"]

CONNECT_TIMEOUT_S = 3.0
"""How long an endpoint may take to accept a connection before preflight calls it down."""


@dataclass(frozen=True)
class Problem:
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class PreflightError(CorixError):
    """The plan cannot run; ``problems`` lists every reason, each with its location."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(map(str, problems)))


@dataclass(frozen=True)
class CheckedPlan:
    """A plan that passed preflight, with its packs loaded and its work counted."""

    plan: Plan
    packs: dict[str, ScenarioPack]
    planned: int


@dataclass(frozen=True)
class _Endpoint:
    where: str
    url: str


async def preflight(
    source: PlanFile,
    *,
    done: Iterable[str] = (),
    check_endpoints: bool = True,
    packs: Mapping[str, ScenarioPack] | None = None,
) -> CheckedPlan:
    """Check ``source.plan``; raise ``PreflightError`` listing every problem found.

    ``done`` holds the work keys a resumed run already completed (not counted as planned);
    ``packs`` the packs it stored, used instead of reading the plan's packs again.
    """
    plan = source.plan
    problems: list[Problem] = []
    endpoints = _check_applications(source, problems)
    endpoints += _check_levels(source, problems)
    packs = dict(packs) if packs is not None else _load_packs(source, problems)
    for index, entry in enumerate(plan.applications):
        unknown = [name for name in entry.scenarios or () if name not in packs]
        if unknown and len(packs) == len(plan.scenarios):
            problems.append(
                Problem(
                    source.where("applications", index, "scenarios"),
                    f"application '{entry.name}': {', '.join(unknown)} is not one of the plan's "
                    f"scenarios ({', '.join(packs)})",
                )
            )
    planned = 0
    if len(packs) == len(plan.scenarios):
        try:
            planned = sum(1 for _ in plan_work(plan, packs, "preflight", set(done)))
        except CorixError as exc:
            problems.append(Problem(source.where("levels"), str(exc)))
    if check_endpoints:
        problems += await _unreachable(endpoints)
    if problems:
        raise PreflightError(problems)
    return CheckedPlan(plan, packs, planned)


def _check_applications(source: PlanFile, problems: list[Problem]) -> list[_Endpoint]:
    endpoints = []
    for index, entry in enumerate(source.plan.applications):
        where = source.where("applications", index, "spec")
        try:
            auth_for(entry)
        except CorixError as exc:
            problems.append(Problem(source.where("applications", index, "auth_env"), str(exc)))
        try:
            build_application(entry.spec, entry.options)
        except (CorixError, ValueError, TypeError) as exc:  # pydantic errors are ValueErrors
            problems.append(Problem(where, f"application '{entry.name}': {_reason(exc)}"))
            continue
        options = AdapterSpec.parse(entry.spec, entry.options).options
        key_env = options.get("key_env")
        if key_env and not os.environ.get(str(key_env)):
            problems.append(
                Problem(where, f"application '{entry.name}': ${key_env} (key_env) is unset")
            )
        target = AdapterSpec.parse(entry.spec).target
        if urlsplit(target).scheme in ("http", "https"):
            endpoints.append(_Endpoint(where, target))
    return endpoints


def _check_levels(source: PlanFile, problems: list[Problem]) -> list[_Endpoint]:
    endpoints = []
    for level, settings in source.plan.levels.items():
        try:
            LEVEL_PLANNERS.get(level.value)
        except CorixError as exc:
            problems.append(Problem(source.where("levels", level.value), str(exc)))
        simulator = settings.simulator
        if settings.engine != "llm" or simulator is None:
            continue
        where = source.where("levels", level.value, "simulator")
        if simulator.key_env and not os.environ.get(simulator.key_env):
            problems.append(Problem(where, f"simulator key ${simulator.key_env} is unset"))
        if simulator.transport == "openai":
            endpoints.append(_Endpoint(where, simulator.base_url))
        elif simulator.transport == "local":
            try:
                require_local_extra()
                resolve_model_file(simulator.base_url)
            except CorixError as exc:
                problems.append(Problem(where, str(exc)))
    return endpoints


def _load_packs(source: PlanFile, problems: list[Problem]) -> dict[str, ScenarioPack]:
    packs: dict[str, ScenarioPack] = {}
    for index, scenario in enumerate(source.plan.scenarios):
        try:
            pack = resolve_pack(source.plan.resolve_scenario(scenario))
        except CorixError as exc:
            problems.append(Problem(source.where("scenarios", index), str(exc)))
            continue
        packs[pack.name] = pack
    return packs


async def _unreachable(endpoints: list[_Endpoint]) -> list[Problem]:
    found = await asyncio.gather(*(_connect(endpoint) for endpoint in endpoints))
    return [problem for problem in found if problem is not None]


async def _connect(endpoint: _Endpoint) -> Problem | None:
    """Can a TCP connection be opened to the endpoint's host and port?"""
    parts = urlsplit(endpoint.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return Problem(endpoint.where, f"'{endpoint.url}' is not an http(s) URL")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(parts.hostname, port), CONNECT_TIMEOUT_S
        )
    except (OSError, TimeoutError, ValueError) as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__
        return Problem(endpoint.where, f"cannot reach {endpoint.url}: {reason}")
    writer.close()
    return None


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(map(str, error['loc'])) or 'value'}: {error['msg']}{_given(error)}"
            for error in exc.errors()
        )
    return str(exc)


def _given(error: Any) -> str:
    """The value a user gave, when short enough to quote beside the problem."""
    value = error.get("input")
    if isinstance(value, str | int | float) and len(str(value)) <= 40:
        return f" (got {value!r})"
    return ""
