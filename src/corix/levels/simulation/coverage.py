"""Persona coverage of a run: which template × parameter combinations ran, and how they fared.

One row per application and persona combination (template, version, parameters, and the
target or task pursued). It counts the sessions, those that reached their goal, those not
measurable, those annotated for risk, and the violations among them. The combinations the
run's packs declare are listed too, with zero sessions when none ran, so that gaps in
coverage show.

Violations are not computed here: the caller passes each session's guardrail verdict per
annotator source, as the measurement core settles it (``Measurement.dialogue_verdicts``),
so coverage counts the same violations as every other number of the run.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping

from pydantic import BaseModel, Field

from corix.domain import EndReason, JsonObject, Level, Plan, RunPlan
from corix.scenarios import ScenarioPack, expand_personas
from corix.storage import Database, get_run, iter_session_facts, run_packs

SIMULATED_LEVELS = (Level.RED_TEAMING, Level.FIELD_TESTING)


class CoverageRow(BaseModel):
    application: str
    level: Level
    scenario: str
    template: str
    template_version: str | None
    parameters: JsonObject
    goal: str | None = Field(description="the red-team target or field task pursued")
    sessions: int = 0
    goal_reached: int = 0
    not_measurable: int = Field(
        default=0, description="sessions left out of measurement: the application never answered"
    )
    annotated: dict[str, int] = Field(
        default_factory=dict, description="sessions with a verdict, per annotator source"
    )
    violations: dict[str, float] = Field(
        default_factory=dict,
        description="violations per annotator source (fractional when annotators disagree)",
    )
    variants: dict[str, int] = Field(
        default_factory=dict,
        description="sessions per attack strategy (red teaming) or message style (field testing)",
    )


class PersonaCoverage(BaseModel):
    run_id: str
    rows: list[CoverageRow]
    declared: int | None = Field(
        description="combinations the run's packs declare (× applications); None when the "
        "packs could not be loaded"
    )

    @property
    def covered(self) -> int:
        return sum(1 for row in self.rows if row.sessions)


_Key = tuple[str, str, str, str, str | None, str, str | None]


def persona_coverage(
    db: Database,
    run_id: str,
    verdicts: Mapping[str, Mapping[str, float]],
    not_measurable: Collection[str] = frozenset(),
) -> PersonaCoverage:
    """The coverage of run ``run_id`` (raises ``NotFoundError`` for an unknown run).

    ``verdicts`` maps a session to its violation value per annotator source;
    ``not_measurable`` names the sessions measurement leaves out (both from the core).
    """
    run = get_run(db, run_id)
    rows: dict[_Key, CoverageRow] = {}
    packs = [record.pack() for record in run_packs(db, [run_id]).values()]
    declared = _declared_rows(run.plan, packs, rows)
    for session in iter_session_facts(db, run_id, [level.value for level in SIMULATED_LEVELS]):
        provenance = session.provenance
        parameters = provenance.parameters
        goal = provenance.brief.goal
        template = provenance.template or "?"
        version = provenance.template_version
        key = _key(
            session.application,
            session.level,
            session.scenario,
            template,
            version,
            parameters,
            goal,
        )
        row = rows.get(key)
        if row is None:
            row = rows[key] = CoverageRow(
                application=session.application,
                level=Level(session.level),
                scenario=session.scenario,
                template=template,
                template_version=version,
                parameters=parameters,
                goal=goal,
            )
        row.sessions += 1
        row.goal_reached += session.end_reason == EndReason.GOAL_REACHED.value
        row.not_measurable += session.id in not_measurable
        variant = (
            session.strategy if row.level is Level.RED_TEAMING else provenance.brief.message_style
        )
        if variant:
            row.variants[variant] = row.variants.get(variant, 0) + 1
        for source, value in verdicts.get(session.id, {}).items():
            row.annotated[source] = row.annotated.get(source, 0) + 1
            row.violations[source] = row.violations.get(source, 0.0) + value
    ordered = sorted(rows.values(), key=_order)
    return PersonaCoverage(run_id=run_id, rows=ordered, declared=declared)


def _key(
    application: str,
    level: str,
    scenario: str,
    template: str,
    version: str | None,
    parameters: JsonObject,
    goal: str | None,
) -> _Key:
    canonical = json.dumps(parameters, sort_keys=True, default=str)
    return (application, level, scenario, template, version, canonical, goal)


def _order(row: CoverageRow) -> tuple[str, str, str, str, str, str]:
    canonical = json.dumps(row.parameters, sort_keys=True, default=str)
    return (row.level.value, row.scenario, row.template, row.goal or "", canonical, row.application)


def _declared_rows(
    plan: RunPlan, packs: list[ScenarioPack], rows: dict[_Key, CoverageRow]
) -> int | None:
    """Add an empty row per declared combination; their number, or None without the packs
    or a plan (an imported run has none)."""
    if not isinstance(plan, Plan) or not packs:
        return None
    count = 0
    for pack in packs:
        for level in SIMULATED_LEVELS:
            if level not in plan.levels:
                continue
            for persona in expand_personas(pack, level):
                for app in plan.applications_for(pack.name):
                    key = _key(
                        app.name,
                        level.value,
                        pack.name,
                        persona.persona,
                        persona.template_version,
                        persona.parameters,
                        persona.goal,
                    )
                    if key not in rows:
                        count += 1
                        rows[key] = CoverageRow(
                            application=app.name,
                            level=level,
                            scenario=pack.name,
                            template=persona.persona,
                            template_version=persona.template_version,
                            parameters=persona.parameters,
                            goal=persona.goal,
                        )
    return count
