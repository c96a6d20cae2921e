"""Evaluation series: their settings, their applications and the run that holds human sessions."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from corix.apps import ADAPTERS, AdapterSpec, CheckReport
from corix.domain import JsonObject, Level
from corix.errors import CorixError
from corix.scenarios import PACK_FOLDERS, pack_record, resolve_pack
from corix.storage import Database
from corix.storage.web import Duplicate, Transaction, transaction
from corix.storage.web import applications as application_store
from corix.storage.web import series as series_store
from corix.storage.web.applications import ApplicationInfo, CheckedStep, RegistrationCheck
from corix.storage.web.series import SeriesRecord
from corix.web.services.annotation_selection import HumanAnnotation
from corix.web.services.balancing import AssignmentDesign
from corix.web.services.service_errors import InputError, NotFound

HUMAN_RUN_PREFIX = "human-"


def human_run_id(evaluation_id: str) -> str:
    """The run that groups an evaluation's human sessions, so run-based commands see them."""
    return f"{HUMAN_RUN_PREFIX}{evaluation_id}"


MAX_CLAIM_MINUTES = 7 * 24 * 60
"""A week: a claim held longer keeps a dialogue from everyone else for too long."""


class EvaluationSettings(BaseModel):
    """How an evaluation series runs its human work; :meth:`problems` checks form input."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    passes_per_item: int = 3
    review_rate: float = 0.2
    max_turns: int = 30
    assignment_design: AssignmentDesign = AssignmentDesign.COUNTERBALANCED
    """The design of the latest tester assignment (see :mod:`corix.web.services.balancing`)."""
    human_annotation: HumanAnnotation = HumanAnnotation.ALL_HUMAN
    annotation_sample_size: int = 0
    claim_minutes: float | None = None
    """How long a claimed dialogue stays with its annotator unsubmitted; ``None``: the
    server's default (``WebSettings.annotation_claim_minutes``)."""

    def problems(self) -> dict[str, str]:
        found: dict[str, str] = {}
        if not 1 <= self.passes_per_item <= 20:
            found["passes_per_item"] = "between 1 and 20"
        if not 0.0 <= self.review_rate <= 1.0:
            found["review_rate"] = "between 0 and 1"
        if not 1 <= self.max_turns <= 200:
            found["max_turns"] = "between 1 and 200"
        if self.claim_minutes is not None and not 1 <= self.claim_minutes <= MAX_CLAIM_MINUTES:
            found["claim_minutes"] = f"between 1 and {MAX_CLAIM_MINUTES} minutes"
        return found


@dataclass(frozen=True)
class EvaluationInfo:
    id: str
    name: str
    description: str
    scenarios: list[str]
    levels: list[Level]
    settings: EvaluationSettings


@dataclass(frozen=True)
class ApplicationDraft:
    """A checked-for-form application, ready to be checked by running it and then stored."""

    name: str
    spec: AdapterSpec
    auth: JsonObject | None


def available_scenarios() -> list[str]:
    return PACK_FOLDERS.names()


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
    return slug or "evaluation"


def evaluation_settings(tx: Transaction, evaluation_id: str) -> EvaluationSettings:
    """A series' settings; the defaults where none are stored."""
    return _settings(series_store.settings(tx, evaluation_id))


def _settings(stored: series_store.SettingsRecord | None) -> EvaluationSettings:
    if stored is None:
        return EvaluationSettings()
    return EvaluationSettings(
        passes_per_item=stored.passes_per_item,
        review_rate=stored.review_rate,
        max_turns=stored.max_turns,
        assignment_design=AssignmentDesign(stored.assignment_design),
        human_annotation=HumanAnnotation(stored.human_annotation),
        annotation_sample_size=stored.annotation_sample_size,
        claim_minutes=stored.claim_minutes,
    )


def _info(record: SeriesRecord) -> EvaluationInfo:
    return EvaluationInfo(
        id=record.id,
        name=record.name,
        description=record.description,
        scenarios=list(record.scenarios),
        levels=[Level(level) for level in record.levels],
        settings=_settings(record.settings),
    )


class Evaluations:
    def __init__(self, db: Database) -> None:
        self._db = db

    def create(
        self,
        name: str,
        *,
        description: str,
        scenarios: list[str],
        levels: list[Level],
        settings: EvaluationSettings,
    ) -> str:
        """Create a series and its human run; return the series' id."""
        name = name.strip()
        problems = settings.problems()
        if not 1 <= len(name) <= 200:
            problems["name"] = "1–200 characters"
        known = set(available_scenarios())
        unknown = [scenario for scenario in scenarios if scenario not in known]
        if not scenarios:
            problems["scenarios"] = "choose at least one scenario"
        elif unknown:
            problems["scenarios"] = f"unknown: {', '.join(unknown)}"
        if not levels:
            problems["levels"] = "choose at least one level"
        if problems:
            raise InputError("please fix the highlighted fields", problems)
        try:
            return series_store.create_series(
                self._db,
                slug=_slug(name),
                name=name,
                description=description.strip(),
                scenarios=scenarios,
                levels=[level.value for level in levels],
                passes_per_item=settings.passes_per_item,
                review_rate=settings.review_rate,
                max_turns=settings.max_turns,
                claim_minutes=settings.claim_minutes,
                human_run_id=human_run_id,
                human_run_name=f"{name} (human sessions)",
                packs=[pack_record(resolve_pack(scenario)) for scenario in scenarios],
            )
        except Duplicate:
            raise InputError(
                f"an evaluation named '{name}' exists already", {"name": "is taken"}
            ) from None

    def all(self) -> list[EvaluationInfo]:
        return [_info(record) for record in series_store.all_series(self._db)]

    def get(self, evaluation_id: str) -> EvaluationInfo:
        with transaction(self._db) as tx:
            record = series_store.series(tx, evaluation_id)
        if record is None:
            raise NotFound(f"no evaluation '{evaluation_id}'")
        return _info(record)

    def choose_human_annotation(
        self, evaluation_id: str, selection: HumanAnnotation, sample_size: int
    ) -> None:
        """Set which sessions go to human annotators (see :mod:`.annotation_selection`)."""
        if selection is HumanAnnotation.SAMPLE and not 1 <= sample_size <= 1000:
            raise InputError(
                "a sample needs between 1 and 1000 sessions per cell",
                {"sample_size": "between 1 and 1000"},
            )
        size = sample_size if selection is HumanAnnotation.SAMPLE else 0
        if not series_store.set_human_annotation(self._db, evaluation_id, selection.value, size):
            raise NotFound(f"no evaluation '{evaluation_id}'")

    def set_claim_time(self, evaluation_id: str, minutes: float | None) -> None:
        """Set how long a claimed dialogue stays with its annotator (``None``: the server's
        default). Claims made before keep their start and age against the new time."""
        problems = EvaluationSettings(claim_minutes=minutes).problems()
        if problems:
            raise InputError(f"a claim lasts {problems['claim_minutes']}", problems)
        if not series_store.set_claim_minutes(self._db, evaluation_id, minutes):
            raise NotFound(f"no evaluation '{evaluation_id}'")

    # -- applications --------------------------------------------------------------------
    def draft_application(
        self, evaluation_id: str, *, name: str, spec: str, credentials_json: str
    ) -> ApplicationDraft:
        """Check the form's fields; raise naming each one that does not fit."""
        self.get(evaluation_id)
        name, spec = name.strip(), spec.strip()
        problems: dict[str, str] = {}
        if not 1 <= len(name) <= 200:
            problems["name"] = "1–200 characters"
        parsed = AdapterSpec(kind="", target="")
        try:
            parsed = AdapterSpec.parse(spec)
            ADAPTERS.get(parsed.kind)
        except CorixError as exc:
            problems["spec"] = str(exc)
        auth = _parse_credentials(credentials_json, problems)
        if problems:
            raise InputError("please fix the highlighted fields", problems)
        return ApplicationDraft(name, parsed, auth)

    def register_application(
        self,
        evaluation_id: str,
        *,
        name: str,
        spec: str,
        credentials_json: str,
        check: CheckReport | None = None,
    ) -> int:
        """Store an application under test; credentials stay in the database, server-side.

        The web's registration runs :func:`corix.apps.check.check_application` first (see
        :mod:`corix.web.services.application_registry`) and passes its report to be kept.
        """
        draft = self.draft_application(
            evaluation_id, name=name, spec=spec, credentials_json=credentials_json
        )
        return self.add_application(evaluation_id, draft, check=check)

    def add_application(
        self, evaluation_id: str, draft: ApplicationDraft, *, check: CheckReport | None = None
    ) -> int:
        try:
            with transaction(self._db) as tx:
                return insert_application(tx, evaluation_id, draft, check)
        except Duplicate:
            raise InputError(
                f"an application named '{draft.name}' exists already", {"name": "is taken"}
            ) from None

    def applications(
        self, evaluation_id: str, *, active_only: bool = False
    ) -> list[ApplicationInfo]:
        found = application_store.overview(self._db, evaluation_id)
        return [app for app in found if app.active] if active_only else found

    def application(self, application_id: int) -> tuple[str, ApplicationInfo]:
        """The application and the series it belongs to."""
        evaluation_id = application_store.application_series(self._db, application_id)
        if evaluation_id is None:
            raise NotFound(f"no application {application_id}")
        info = next(a for a in self.applications(evaluation_id) if a.id == application_id)
        return evaluation_id, info


def insert_application(
    tx: Transaction, evaluation_id: str, draft: ApplicationDraft, check: CheckReport | None
) -> int:
    version = None
    if check is not None:
        version = next((step.detail for step in check.steps if step.name == "version"), None)
    return application_store.add_application(
        tx,
        evaluation_id,
        name=draft.name,
        spec=draft.spec.public(),
        options=draft.spec.options,
        auth=draft.auth,
        version=version or None,
        check=_check_record(check),
    )


def _check_record(check: CheckReport | None) -> RegistrationCheck | None:
    if check is None:
        return None
    return RegistrationCheck(
        ok=check.ok,
        steps=tuple(
            CheckedStep(step.name, round(step.elapsed_ms, 1), step.ok) for step in check.steps
        ),
    )


def _parse_credentials(text: str, problems: dict[str, str]) -> JsonObject | None:
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problems["credentials"] = f"not valid JSON: {exc.msg}"
        return None
    except RecursionError:
        problems["credentials"] = "not valid JSON: nested too deeply"
        return None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        problems["credentials"] = 'a JSON object of strings, e.g. {"api_key": "…"}'
        return None
    return value
