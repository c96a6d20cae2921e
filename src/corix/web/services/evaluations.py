"""Evaluation series: their settings, their applications and the run that holds human sessions."""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from corix.apps import ADAPTERS, AdapterSpec
from corix.domain import Level
from corix.errors import CorixError
from corix.storage import Database
from corix.storage.orm import ApplicationRow, EvaluationRow, RunRow
from corix.storage.orm_web import ApplicationOptionsRow, EvaluationSettingsRow
from corix.testing.packs import PACK_FOLDERS
from corix.web.services.errors import InputError, NotFound

HUMAN_RUN_PREFIX = "human-"


def human_run_id(evaluation_id: str) -> str:
    """The run that groups an evaluation's human sessions, so run-based commands see them."""
    return f"{HUMAN_RUN_PREFIX}{evaluation_id}"


@dataclass(frozen=True)
class EvaluationSettings:
    passes_per_item: int = 3
    review_rate: float = 0.2
    max_turns: int = 30

    def problems(self) -> dict[str, str]:
        found: dict[str, str] = {}
        if not 1 <= self.passes_per_item <= 20:
            found["passes_per_item"] = "between 1 and 20"
        if not 0.0 <= self.review_rate <= 1.0:
            found["review_rate"] = "between 0 and 1"
        if not 1 <= self.max_turns <= 200:
            found["max_turns"] = "between 1 and 200"
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
class ApplicationInfo:
    """An application as the admin sees it. Credentials are reported as present, never shown."""

    id: int
    name: str
    spec: str
    options: dict[str, Any]
    has_credentials: bool


def available_scenarios() -> list[str]:
    return PACK_FOLDERS.names()


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
    return slug or "evaluation"


def evaluation_settings(s: Session, evaluation_id: str) -> EvaluationSettings:
    """A series' settings; the defaults where none are stored."""
    row = s.get(EvaluationSettingsRow, evaluation_id)
    if row is None:
        return EvaluationSettings()
    return EvaluationSettings(row.passes_per_item, row.review_rate, row.max_turns)


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
            with self._db.session() as s:
                evaluation_id = self._free_id(s, _slug(name))
                s.add(
                    EvaluationRow(
                        id=evaluation_id,
                        name=name,
                        description=description.strip(),
                        scenarios=list(scenarios),
                        levels=[level.value for level in levels],
                    )
                )
                s.flush()
                s.add(
                    EvaluationSettingsRow(
                        evaluation_id=evaluation_id,
                        passes_per_item=settings.passes_per_item,
                        review_rate=settings.review_rate,
                        max_turns=settings.max_turns,
                    )
                )
                s.add(
                    RunRow(
                        id=human_run_id(evaluation_id),
                        name=f"{name} (human sessions)",
                        evaluation_id=evaluation_id,
                        plan={"name": name, "kind": "human"},
                        status="running",
                    )
                )
                return evaluation_id
        except IntegrityError:
            raise InputError(
                f"an evaluation named '{name}' exists already", {"name": "is taken"}
            ) from None

    @staticmethod
    def _free_id(s: Session, slug: str) -> str:
        candidate = slug
        while s.get(EvaluationRow, candidate) is not None:
            candidate = f"{slug}-{secrets.token_hex(2)}"
        return candidate

    def all(self) -> list[EvaluationInfo]:
        with self._db.session() as s:
            rows = s.scalars(select(EvaluationRow).order_by(EvaluationRow.created_at))
            return [self._info(s, row) for row in rows]

    def get(self, evaluation_id: str) -> EvaluationInfo:
        with self._db.session() as s:
            row = s.get(EvaluationRow, evaluation_id)
            if row is None:
                raise NotFound(f"no evaluation '{evaluation_id}'")
            return self._info(s, row)

    @staticmethod
    def _info(s: Session, row: EvaluationRow) -> EvaluationInfo:
        return EvaluationInfo(
            id=row.id,
            name=row.name,
            description=row.description,
            scenarios=list(row.scenarios),
            levels=[Level(level) for level in row.levels],
            settings=evaluation_settings(s, row.id),
        )

    # -- applications --------------------------------------------------------------------
    def register_application(
        self, evaluation_id: str, *, name: str, spec: str, credentials_json: str
    ) -> int:
        """Register an application under test; credentials stay in the database, server-side."""
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
        try:
            with self._db.session() as s:
                row = ApplicationRow(
                    name=name, spec=parsed.public(), auth=auth, evaluation_id=evaluation_id
                )
                s.add(row)
                s.flush()
                s.add(ApplicationOptionsRow(application_id=row.id, options=parsed.options))
                return row.id
        except IntegrityError:
            raise InputError(
                f"an application named '{name}' exists already", {"name": "is taken"}
            ) from None

    def applications(self, evaluation_id: str) -> list[ApplicationInfo]:
        with self._db.session() as s:
            rows = s.execute(
                select(ApplicationRow, ApplicationOptionsRow.options)
                .outerjoin(
                    ApplicationOptionsRow, ApplicationOptionsRow.application_id == ApplicationRow.id
                )
                .where(ApplicationRow.evaluation_id == evaluation_id)
                .order_by(ApplicationRow.name)
            )
            return [
                ApplicationInfo(r.id, r.name, r.spec, options or {}, bool(r.auth))
                for r, options in rows
            ]


def _parse_credentials(text: str, problems: dict[str, str]) -> dict[str, Any] | None:
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problems["credentials"] = f"not valid JSON: {exc.msg}"
        return None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        problems["credentials"] = 'a JSON object of strings, e.g. {"api_key": "…"}'
        return None
    return value
