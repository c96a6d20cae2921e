"""Plans: which applications, scenarios and levels to test, how much, and with which seed.

A plan is a record every layer reads (execution runs it, measurement sizes and prices it,
storage keeps it with its run), so it lives here; :data:`RunPlan` is what a stored run
holds instead when no plan made it (a web evaluation, an import) or its plan has aged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from corix.config import (
    Location,
    format_location,
    line_for,
    parse_yaml_document,
    read_config_text,
    validation_summary,
)
from corix.domain.endpoint import EndpointConfig
from corix.domain.json_values import JsonObject
from corix.domain.session_records import Level
from corix.errors import ConfigError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Documented ranges (docs/plans-and-packs.md): a plan outside them is refused by preflight
# with the field's line, instead of hanging while it lists 10**12 work items or failing
# mid-run on a seed no 64-bit column holds.
MAX_SESSIONS = 1_000_000
"""Sessions per application × scenario × level."""
MAX_REPEATS = 10_000
"""Runs of each scripted test."""
MAX_SEED = 2**63 - 1
"""Seeds are stored in 64-bit integer columns and seed NumPy, which takes no negatives."""


class ApplicationEntry(_Strict):
    """An application under test. Secrets are named by environment variable, never inlined."""

    name: str = Field(min_length=1, max_length=200)
    spec: str = Field(min_length=3)
    options: JsonObject = Field(default_factory=dict)
    """The adapter's own options, as the spec's adapter reads them."""
    auth_env: str | None = Field(
        default=None, description="environment variable holding the JSON credentials"
    )
    new_version: bool = Field(
        default=False,
        description="register a changed spec as a new version (NAME v2…) instead of refusing it",
    )
    scenarios: list[str] | None = Field(
        default=None,
        min_length=1,
        description="test it only in these scenarios (pack names), e.g. an agent in the "
        "scenarios whose packs give it tools; unset: every scenario of the plan",
    )


class LevelSettings(_Strict):
    sessions: int | None = Field(
        default=None,
        ge=0,
        le=MAX_SESSIONS,
        description="sessions per application × scenario; for model testing, None runs every "
        "scripted test once",
    )
    repeats: int = Field(
        default=1, ge=1, le=MAX_REPEATS, description="model testing: runs of each script"
    )
    max_turns: int = Field(default=6, ge=1, le=100)
    engine: Literal["scripted", "llm"] = "scripted"
    simulator: EndpointConfig | None = None
    """The model playing the users when ``engine`` is ``llm``."""
    fallback: Literal["none", "scripted"] = "none"
    """``scripted``: when the model gives no usable message within its re-asks, the
    scripted engine writes that one message (marked on the turn) instead of the session
    ending with a simulator error."""
    strategies: list[str] | None = Field(
        default=None, description="red teaming: attack strategies to draw from (default: all)"
    )

    @model_validator(mode="after")
    def _llm_needs_endpoint(self) -> LevelSettings:
        if self.engine == "llm" and self.simulator is None:
            raise ValueError("engine 'llm' needs a 'simulator' endpoint")
        return self


class Plan(_Strict):
    name: str = Field(min_length=1)
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    applications: list[ApplicationEntry] = Field(min_length=1)
    scenarios: list[str] = Field(min_length=1)
    levels: dict[Level, LevelSettings] = Field(min_length=1)
    concurrency: int = Field(default=50, ge=1, le=10_000)
    gates: dict[str, float] = Field(default_factory=dict)
    """Harm → the highest defect rate ``corix gate`` lets pass (see docs/measurement.md)."""
    deadline_s: float | None = Field(default=None, gt=0)
    """Stop the run after this many seconds (status ``interrupted``; ``--resume`` goes on)."""
    cache: str | None = None
    """SQLite file caching the replies of applications and simulated users that call models
    through the client layer: a rerun asks no model again (``corix run --cache FILE``)."""
    base_dir: str = Field(default=".", description="where relative pack paths resolve")

    @field_validator("gates")
    @classmethod
    def _rates_between_0_and_1(cls, gates: dict[str, float]) -> dict[str, float]:
        for harm, limit in gates.items():
            if not 0 <= limit <= 1:
                raise ValueError(f"gate '{harm}': a rate from 0 to 1, got {limit}")
        return gates

    @field_validator("applications")
    @classmethod
    def _unique_names(cls, apps: list[ApplicationEntry]) -> list[ApplicationEntry]:
        seen: set[str] = set()
        for app in apps:
            if app.name in seen:
                raise ValueError(f"application name '{app.name}' is used twice")
            seen.add(app.name)
        return apps

    def applications_for(self, scenario: str) -> list[ApplicationEntry]:
        """The applications tested in ``scenario`` (a pack name)."""
        return [a for a in self.applications if a.scenarios is None or scenario in a.scenarios]

    def resolve_scenario(self, scenario: str) -> str:
        """A built-in pack name stays as is; a path is made absolute against ``base_dir``."""
        if "/" in scenario or scenario.startswith("."):
            return str((Path(self.base_dir) / scenario).resolve())
        return scenario


@dataclass(frozen=True)
class PlanFile:
    """A plan and where its values sit in its file, so problems found later name a line.

    A plan read back from the database (``--resume``) has no file: problems name the field.
    """

    plan: Plan
    path: Path | None = None
    lines: Mapping[Location, int] = field(default_factory=dict)

    def where(self, *loc: str | int) -> str:
        if self.path is None:
            return f"plan field {format_location(loc)}"
        line = line_for(loc, self.lines)
        return f"{self.path}:{line}" if line else str(self.path)


def load_plan_file(path: Path) -> PlanFile:
    plan, lines = parse_yaml_document(read_config_text(path), Plan, source=path)
    plan = plan.model_copy(update={"base_dir": str(path.resolve().parent)})
    return PlanFile(plan, path, lines)


def load_plan(path: Path) -> Plan:
    return load_plan_file(path).plan


class HumanRunPlan(_Strict):
    """What a web evaluation's run of human sessions stores as its plan: no process runs it."""

    name: str
    kind: Literal["human"] = "human"


class ImportedRunPlan(_Strict):
    """What a run of imported dialogues stores as its plan: the file they came from."""

    name: str
    kind: Literal["imported"] = "imported"
    source: str


class OutdatedPlan(BaseModel):
    """A stored plan that no longer validates: written by a corix whose plan fields have
    since changed (a field renamed or removed). It is kept as given: a run listed, shown or
    archived keeps it unchanged, but nothing resumes, prices or gates from it."""

    model_config = ConfigDict(frozen=True)

    stored: JsonObject
    problem: str


RunPlan: TypeAlias = Plan | HumanRunPlan | ImportedRunPlan | OutdatedPlan
"""What a stored run holds as its plan: by who made the run (``corix run``, a web
evaluation, ``corix import``), or an outdated plan kept as given."""


def read_run_plan(stored: JsonObject) -> RunPlan:
    """The typed plan of a run's stored JSON: ``kind`` names a human or imported run, any
    other is a :class:`Plan`; one that no longer validates is an :class:`OutdatedPlan`."""
    kind = stored.get("kind")
    model: type[Plan | HumanRunPlan | ImportedRunPlan] = (
        HumanRunPlan if kind == "human" else ImportedRunPlan if kind == "imported" else Plan
    )
    try:
        return model.model_validate(stored)
    except ValidationError as error:
        return OutdatedPlan(stored=stored, problem=validation_summary(error))


def runnable_plan(run_id: str, plan: RunPlan) -> Plan:
    """The plan a stored run resumes (or goes on in waves) with; other plans say why not."""
    if isinstance(plan, Plan):
        return plan
    if isinstance(plan, OutdatedPlan):
        raise ConfigError(
            f"run '{run_id}' cannot be resumed: its stored plan is not valid ({plan.problem})"
        )
    made = "imported" if isinstance(plan, ImportedRunPlan) else "a web evaluation's human run"
    raise ConfigError(
        f"run '{run_id}' was {made}, not made from a plan: there is nothing to resume"
    )


def plan_gates(plan: RunPlan) -> dict[str, float]:
    """Harm → the highest defect rate the run's plan lets pass; none but a run plan's."""
    return plan.gates if isinstance(plan, Plan) else {}


def run_plan_json(plan: RunPlan) -> JsonObject:
    """The JSON a run stores for ``plan``; an outdated plan's is the one it was read from."""
    if isinstance(plan, OutdatedPlan):
        return plan.stored
    return plan.model_dump(mode="json")
