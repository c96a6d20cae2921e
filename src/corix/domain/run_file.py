"""The run file: a whole run as one typed, versioned document (``corix export --format corix``).

A JSON Lines file. Its first line is a :class:`RunDocument`: the format and its version,
the run (plan, seed, status, summary), the applications its sessions used, the scenario
packs it stored (with their content hashes), its annotation jobs and the reports written
of it (each with the measurement specification it applied). Then one
:class:`SessionLine` per session: the dialogue as OpenAI chat ``messages``, and beside it,
under ``corix``, everything stored of the session (turns, questionnaire answers,
annotation passes, consensus and resolutions), so ``corix import`` stores an equal run.

Records keep stored JSON (provenance, turn meta) as it was stored, not as today's models
would re-read it, so a round trip changes no row. People are named by username, never by
their account number in one database.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    field_validator,
)

from corix.domain.annotation_jobs import AnnotationJobSettings
from corix.domain.json_values import JsonObject
from corix.domain.plan import RunPlan, read_run_plan, run_plan_json
from corix.domain.reports import WrittenReportSettings
from corix.domain.runs import RunSummary
from corix.domain.session_records import EndReason, Level, SessionSource, SessionStatus, TurnRecord

__all__ = [
    "RUN_FILE_FORMAT",
    "RUN_FILE_VERSION",
    "ArchivedAnnotationJob",
    "ArchivedApplication",
    "ArchivedConsensus",
    "ArchivedPack",
    "ArchivedPass",
    "ArchivedPassAnswer",
    "ArchivedQuestionnaireAnswer",
    "ArchivedReport",
    "ArchivedResolution",
    "ArchivedRun",
    "ArchivedSession",
    "RunDocument",
    "SessionLine",
]

RUN_FILE_FORMAT: Final = "corix-run"
RUN_FILE_VERSION: Final = 1
"""Raised when a field changes meaning or a required one is added; readers refuse a version
they do not know rather than guess."""


def _stored_plan(value: Any) -> Any:
    return read_run_plan(value) if isinstance(value, dict) else value


StoredPlan = Annotated[
    RunPlan,
    BeforeValidator(_stored_plan),
    PlainSerializer(run_plan_json, return_type=JsonObject),
]
"""A run's plan as the file carries it: typed as the run stored it (a plan, a web
evaluation's, an import's, or an outdated plan kept as given), written as that JSON."""


# Bounds on text fields are the database columns' widths, so a file PostgreSQL would refuse
# is refused on reading, with its line and field, on every backend.


class _Archived(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Timed(_Archived):
    @field_validator("*", mode="after")
    @classmethod
    def _utc(cls, value: Any) -> Any:
        """Every moment in UTC, whatever offset the file wrote it with."""
        return value.astimezone(UTC) if isinstance(value, datetime) else value


class ArchivedApplication(_Archived):
    """An application the run's sessions used (never its credentials)."""

    name: str = Field(min_length=1, max_length=200)
    spec: str
    version: str | None = Field(default=None, max_length=200)


class ArchivedPack(_Archived):
    """A scenario pack as the run stored it: identity, content hash and content."""

    name: str = Field(min_length=1, max_length=100)
    version: str = Field(max_length=100)
    source: str
    content_hash: str = Field(max_length=64)
    definition: JsonObject


class ArchivedAnnotationJob(_Timed):
    annotator: str = Field(max_length=200)
    started_at: AwareDatetime
    settings: AnnotationJobSettings


class ArchivedReport(_Timed):
    """A report written of the run, with the settings (measurement specification
    included) that made it."""

    report_id: str = Field(max_length=32)
    written_at: AwareDatetime
    digest: str = Field(max_length=64)
    settings: WrittenReportSettings


class ArchivedRun(_Timed):
    id: str = Field(min_length=1, max_length=64)
    name: str = Field(max_length=200)
    series: str | None = Field(
        default=None, description="the web evaluation series it belonged to (not re-attached)"
    )
    plan: StoredPlan
    seed: int
    status: str = Field(max_length=32)
    summary: RunSummary
    created_at: AwareDatetime
    finished_at: AwareDatetime | None = None


class RunDocument(_Timed):
    """The first line of a run file: the run and what it used, and how many sessions follow."""

    format: Literal["corix-run"] = RUN_FILE_FORMAT
    version: Literal[1] = RUN_FILE_VERSION
    corix_version: str
    exported_at: AwareDatetime
    run: ArchivedRun
    applications: tuple[ArchivedApplication, ...] = ()
    packs: tuple[ArchivedPack, ...] = ()
    annotation_jobs: tuple[ArchivedAnnotationJob, ...] = ()
    reports: tuple[ArchivedReport, ...] = ()
    sessions: int = Field(ge=0, description="session lines that follow (a cut file is refused)")


class ArchivedQuestionnaireAnswer(_Timed):
    item_id: str = Field(max_length=100)
    respondent: str = Field(max_length=200)
    """Who answered: a simulated user's name, or ``user:`` and the person's username."""
    simulated: bool
    value: float | None = None
    text: str | None = None
    provenance: JsonObject = Field(default_factory=dict)
    created_at: AwareDatetime


class ArchivedPassAnswer(_Archived):
    question_id: str = Field(max_length=100)
    turn_index: int | None = None
    value: float | None = None
    text: str | None = None
    reasoning: str | None = None


class ArchivedPass(_Timed):
    """One annotator's answers to one category for the session, one repeat."""

    category: str = Field(max_length=100)
    annotator: str = Field(max_length=200)
    annotator_kind: str = Field(max_length=32)
    pass_no: int
    repeat_no: int
    status: str = Field(max_length=32)
    error: str | None = None
    flagged: bool = False
    note: str | None = None
    provenance: JsonObject = Field(default_factory=dict)
    account: str | None = Field(default=None, description="the annotating person's username")
    created_at: AwareDatetime
    model_calls: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    answers: tuple[ArchivedPassAnswer, ...] = ()


class ArchivedConsensus(_Archived):
    category: str = Field(max_length=100)
    annotator: str = Field(max_length=200)
    question_id: str = Field(max_length=100)
    turn_index: int | None = None
    value: float | None = None
    text: str | None = None
    method: str = Field(max_length=32)
    n_runs: int
    flip_rate: float


class ArchivedResolution(_Timed):
    category: str = Field(max_length=100)
    question_id: str = Field(max_length=100)
    turn_index: int | None = None
    status: str = Field(max_length=32)
    value: float | None = None
    text: str | None = None
    note: str | None = None
    resolved_by: str | None = Field(default=None, description="the senior annotator's username")
    created_at: AwareDatetime


class ArchivedSession(_Timed):
    """A session as stored, with everything stored of it."""

    id: str = Field(min_length=1, max_length=64)
    work_key: str | None = Field(default=None, max_length=300)
    application: str
    """Names one of the document's applications."""
    scenario: str = Field(max_length=100)
    level: Level
    source: SessionSource
    status: SessionStatus
    end_reason: EndReason | None = None
    end_detail: str | None = None
    provenance: JsonObject
    persona: str | None = None
    strategy: str | None = Field(default=None, max_length=100)
    first_success_turn: int | None = None
    tester: str | None = Field(default=None, description="the testing person's username")
    started_at: AwareDatetime
    ended_at: AwareDatetime | None = None
    simulator_calls: int | None = None
    simulator_prompt_tokens: int | None = None
    simulator_completion_tokens: int | None = None
    turns: tuple[TurnRecord, ...] = ()
    questionnaire: tuple[ArchivedQuestionnaireAnswer, ...] = ()
    passes: tuple[ArchivedPass, ...] = ()
    consensus: tuple[ArchivedConsensus, ...] = ()
    resolutions: tuple[ArchivedResolution, ...] = ()


class SessionLine(_Archived):
    """A line after the first: the dialogue as OpenAI chat messages (for any tool that
    reads them; corix checks they match) and the stored session beside them."""

    messages: tuple[JsonObject, ...]
    corix: ArchivedSession
