"""The records stores take and return; storage alone turns them into rows and back.

Writes take :class:`NewSession`, the domain's :class:`~corix.domain.TurnRecord`,
:class:`NewQuestionnaireAnswer`, :class:`NewPass` (with its :class:`StoredAnswer` s) and
:class:`StoredConsensus`; annotation reads return :class:`StoredPass` and
:class:`StoredConsensus`. Answers are stored as ``value_num`` (sliders, severities) or
``value_text`` (yes/no, choices, text) and travel as one :data:`StoredValue`. Column names
never leave ``corix.storage``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from corix.domain import (
    AnnotationJobSettings,
    JsonObject,
    Level,
    Provenance,
    QuestionnaireAnswer,
    RunPlan,
    RunSummary,
    SessionSource,
    WrittenReportSettings,
)
from corix.storage.text import Columns, marked, storable_fields

__all__ = [
    "AnnotationJobRecord",
    "ApplicationRecord",
    "NewPass",
    "NewQuestionnaireAnswer",
    "NewSession",
    "RunRecord",
    "StoredAnswer",
    "StoredConsensus",
    "StoredPass",
    "StoredValue",
    "WrittenReportRecord",
]

StoredValue = str | float
"""An answer's value: a number (sliders, severities) or text (yes/no, choices, text)."""


def split_value(value: StoredValue | None) -> Columns:
    """``value`` as the ``value_num`` / ``value_text`` columns."""
    if value is None:
        return {"value_num": None, "value_text": None}
    if isinstance(value, str):
        return {"value_num": None, "value_text": value}
    return {"value_num": float(value), "value_text": None}


@dataclass(frozen=True)
class StoredAnswer:
    question_id: str
    turn_index: int | None
    value: StoredValue | None
    reasoning: str | None


@dataclass(frozen=True)
class StoredPass:
    id: int
    session_id: str
    category: str
    annotator: str
    annotator_kind: str
    pass_no: int
    repeat_no: int
    status: str
    error: str | None
    provenance: JsonObject
    flagged: bool
    note: str | None
    answers: tuple[StoredAnswer, ...]

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class StoredConsensus:
    session_id: str
    category: str
    annotator: str
    question_id: str
    turn_index: int | None
    value: StoredValue | None
    method: str
    n_runs: int
    flip_rate: float


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A stored run: its plan, seed, status and summary (counted from its rows)."""

    id: str
    name: str
    evaluation_id: str | None
    plan: RunPlan
    seed: int
    status: str
    summary: RunSummary
    created_at: datetime
    finished_at: datetime | None
    lease_holder: str | None = None
    """The process that holds the run (running or annotating it), in words."""
    lease_heartbeat_at: datetime | None = None
    """When that process last said it is alive (see ``corix.storage.run_lease``)."""


@dataclass(frozen=True, slots=True)
class RunTotals:
    """A run's stored sessions and turns, counted from its rows: what its summary holds."""

    sessions: int
    failed_sessions: int
    turns: int
    error_turns: int
    prompt_tokens: int
    """The application's tokens, summed over the run's turns."""
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class AnnotationJobRecord:
    """One annotation job of a run: when it started and what it was asked to do."""

    run_id: str
    started_at: datetime
    settings: AnnotationJobSettings


@dataclass(frozen=True, slots=True)
class WrittenReportRecord:
    """A report written of a run: its settings and their digest as the report states it.

    A series report is stored with every run of the series under one ``report_id``."""

    report_id: str
    run_id: str
    digest: str
    settings: WrittenReportSettings


@dataclass(frozen=True, slots=True)
class ApplicationRecord:
    """An application under test as stored; its credentials never leave storage."""

    id: int
    name: str
    spec: str
    version: str | None
    evaluation_id: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class NewSession:
    """A session as it starts: stored as running until the writer finishes it."""

    id: str
    run_id: str | None
    work_key: str | None
    application_id: int
    scenario: str
    level: Level
    source: SessionSource
    provenance: Provenance
    persona: str | None = None
    strategy: str | None = None
    started_at: datetime = field(default_factory=_now)
    tester_id: int | None = None
    """The web account of the person who tested (human sessions only)."""


@dataclass(frozen=True, slots=True)
class NewQuestionnaireAnswer:
    """One answer to one questionnaire item after a session, by a person or a simulated one."""

    session_id: str
    item_id: str
    respondent: str
    simulated: bool
    value: float | None = None
    text: str | None = None
    provenance: JsonObject = field(default_factory=dict)
    created_at: datetime = field(default_factory=_now)

    def as_answer(self) -> QuestionnaireAnswer:
        """The item and its answer alone, as a transcript or an export shows them."""
        return QuestionnaireAnswer(item_id=self.item_id, value=self.value, text=self.text)


@dataclass(frozen=True, slots=True)
class NewPass:
    """One annotator's answers to one category (or harm) for one session, one repeat."""

    session_id: str
    category: str
    annotator: str
    annotator_kind: str
    pass_no: int
    repeat_no: int
    ok: bool
    error: str | None
    provenance: JsonObject
    answers: tuple[StoredAnswer, ...]
    flagged: bool = False
    """A person flagged the dialogue for review."""
    note: str | None = None
    user_id: int | None = None
    """The web account of a person who annotated."""


# -- records as columns (the writer's and the bulk inserts' concern only) -------------------


ANSWER_TEXT = ("value_text", "reasoning")


def pass_columns(new: NewPass) -> tuple[Columns, list[Columns]]:
    """The pass row and its answer rows (without ``pass_id``, known once inserted).

    The pass's provenance notes which texts, its answers' included, had unstorable
    characters replaced. Every write path (the annotation writer, imported labels, a
    person's pass in the web) stores passes through this.
    """
    answers = [answer_columns(answer) for answer in new.answers]
    replaced = sorted({name for answer in answers for name in storable_fields(answer, ANSWER_TEXT)})
    row = marked(_pass_columns(new), ("error", "note"), into="provenance")
    if replaced:
        provenance = row.get("provenance") or {}
        already = provenance.get("replaced_unstorable", [])
        row = {**row, "provenance": {**provenance, "replaced_unstorable": [*already, *replaced]}}
    return row, answers


def _pass_columns(new: NewPass) -> Columns:
    return {
        "session_id": new.session_id,
        "category": new.category,
        "annotator": new.annotator,
        "annotator_kind": new.annotator_kind,
        "pass_no": new.pass_no,
        "repeat_no": new.repeat_no,
        "status": "ok" if new.ok else "failed",
        "error": new.error,
        "flagged": new.flagged,
        "note": new.note,
        "user_id": new.user_id,
        "provenance": new.provenance,
        **pass_usage_columns(new.annotator_kind, new.provenance),
    }


_PASS_USAGE = ("model_calls", "prompt_tokens", "completion_tokens")


def pass_usage_columns(kind: str, provenance: JsonObject) -> dict[str, int | None]:
    """A pass's model calls and tokens, from the model-call details in its provenance:
    none for rules and people; a pass answered from the response cache spent nothing;
    a model's pass without details (an imported one) is not recorded (``None``)."""
    details = provenance.get("details")
    if not isinstance(details, dict):
        return dict.fromkeys(_PASS_USAGE, None if kind == "llm" else 0)
    if details.get("cached"):
        return dict.fromkeys(_PASS_USAGE, 0)
    return {
        "model_calls": int(details.get("attempts") or 0),
        "prompt_tokens": int(details.get("prompt_tokens") or 0),
        "completion_tokens": int(details.get("completion_tokens") or 0),
    }


def answer_columns(answer: StoredAnswer) -> Columns:
    return {
        "question_id": answer.question_id,
        "turn_index": answer.turn_index,
        "reasoning": answer.reasoning,
        **split_value(answer.value),
    }


def consensus_columns(consensus: StoredConsensus) -> Columns:
    return {
        "session_id": consensus.session_id,
        "category": consensus.category,
        "annotator": consensus.annotator,
        "question_id": consensus.question_id,
        "turn_index": consensus.turn_index,
        **split_value(consensus.value),
        "method": consensus.method,
        "n_runs": consensus.n_runs,
        "flip_rate": consensus.flip_rate,
    }
