"""ORM rows. Kept apart from domain models (``corix.domain``) and API schemas (``corix.web``).

Identifiers of sessions and runs are strings made by corix, so that records stay stable when
exported, merged or moved between SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from corix.domain import JsonObject
from corix.storage.clock import utcnow
from corix.storage.text import UntrustedJSON, UntrustedText


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        JsonObject: UntrustedJSON,
        list[Any]: UntrustedJSON,
    }


class EvaluationRow(Base):
    """An evaluation series: the unit an evaluation team plans, runs and reports."""

    __tablename__ = "evaluations"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    description: Mapped[str] = mapped_column(UntrustedText, default="")
    scenarios: Mapped[list[Any]] = mapped_column(default=list)
    levels: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ApplicationRow(Base):
    """An application under test. ``auth`` stays server-side and is never exported.

    A web evaluation series owns its applications' names: two series may each have an
    "Assistant A". Names of applications outside any series (registered by plans) are
    unique among themselves.
    """

    __tablename__ = "applications"
    __table_args__ = (
        Index(
            "uq_application_name",
            "name",
            unique=True,
            sqlite_where=text("evaluation_id IS NULL"),
            postgresql_where=text("evaluation_id IS NULL"),
        ),
        Index(
            "uq_series_application_name",
            "evaluation_id",
            "name",
            unique=True,
            sqlite_where=text("evaluation_id IS NOT NULL"),
            postgresql_where=text("evaluation_id IS NOT NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200))
    spec: Mapped[str] = mapped_column(UntrustedText)
    auth: Mapped[JsonObject | None] = mapped_column(default=None)
    version: Mapped[str | None] = mapped_column(String(200), default=None)
    evaluation_id: Mapped[str | None] = mapped_column(
        ForeignKey("evaluations.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RunRow(Base):
    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    evaluation_id: Mapped[str | None] = mapped_column(
        ForeignKey("evaluations.id", ondelete="SET NULL"), default=None
    )
    plan: Mapped[JsonObject] = mapped_column()
    seed: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(32), default="running")
    summary: Mapped[JsonObject] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    # The process holding the run (see corix.storage.run_lease).
    lease_holder: Mapped[str | None] = mapped_column(String(300), default=None)
    lease_heartbeat_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), default=None
    )
    # Incremented by every takeover: writes under an older epoch are refused (fencing).
    lease_epoch: Mapped[int] = mapped_column(default=0, server_default="0")


class RunPackRow(Base):
    """A scenario pack a run used, as it was: later steps load it from here, never by name."""

    __tablename__ = "run_packs"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    version: Mapped[str] = mapped_column(String(100))
    source: Mapped[str] = mapped_column(UntrustedText)
    content_hash: Mapped[str] = mapped_column(String(64))
    definition: Mapped[JsonObject] = mapped_column()


class AnnotationJobRow(Base):
    """One annotation job's settings, stored when it starts (a resumed job adds a row)."""

    __tablename__ = "annotation_jobs"
    __table_args__ = (Index("ix_annotation_jobs_run", "run_id"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    annotator: Mapped[str] = mapped_column(String(200))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    settings: Mapped[JsonObject] = mapped_column()


class WrittenReportRow(Base):
    """The settings a report was written with: one row per run it covers (a series report
    has one per run of the series, sharing ``report_id``)."""

    __tablename__ = "written_reports"
    __table_args__ = (Index("ix_written_reports_run", "run_id"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    report_id: Mapped[str] = mapped_column(String(32))
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    written_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    digest: Mapped[str] = mapped_column(String(64))
    settings: Mapped[JsonObject] = mapped_column()


class SessionRow(Base):
    """A dialogue from any source: script, simulated user or person."""

    __tablename__ = "sessions"
    __table_args__ = (
        UniqueConstraint("run_id", "work_key", name="uq_session_work_key"),
        Index("ix_sessions_run", "run_id"),
    )

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str | None] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), default=None
    )
    work_key: Mapped[str | None] = mapped_column(String(300), default=None)
    application_id: Mapped[int] = mapped_column(ForeignKey("applications.id"))
    scenario: Mapped[str] = mapped_column(String(100))
    level: Mapped[str] = mapped_column(String(32))
    source: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(32), default="running")
    end_reason: Mapped[str | None] = mapped_column(String(64), default=None)
    # Why a session ended, in words; always set when it failed (application or simulator).
    end_detail: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    provenance: Mapped[JsonObject] = mapped_column(default=dict)
    persona: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    strategy: Mapped[str | None] = mapped_column(String(100), default=None)
    first_success_turn: Mapped[int | None] = mapped_column(Integer, default=None)
    tester_id: Mapped[int | None] = mapped_column(Integer, default=None)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    # The simulated user's model calls (0 where no model played the user); NULL: not
    # recorded (an imported session, or one stored before corix recorded them).
    simulator_calls: Mapped[int | None] = mapped_column(Integer, default=None)
    simulator_prompt_tokens: Mapped[int | None] = mapped_column(Integer, default=None)
    simulator_completion_tokens: Mapped[int | None] = mapped_column(Integer, default=None)

    application: Mapped[ApplicationRow] = relationship(lazy="joined")
    turns: Mapped[list[TurnRow]] = relationship(
        order_by="TurnRow.idx", cascade="all, delete-orphan", passive_deletes=True
    )


class TurnRow(Base):
    __tablename__ = "turns"
    __table_args__ = (UniqueConstraint("session_id", "idx", name="uq_turn_index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    idx: Mapped[int] = mapped_column(Integer)
    user_text: Mapped[str] = mapped_column(UntrustedText)
    response_text: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    error: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer, default=None)
    completion_tokens: Mapped[int | None] = mapped_column(Integer, default=None)
    meta: Mapped[JsonObject] = mapped_column(default=dict)
    # Every message of the turn (tool calls and results, system messages, content parts):
    # NULL for a plain turn, which its two texts hold whole.
    messages: Mapped[list[Any] | None] = mapped_column(
        UntrustedJSON(none_as_null=True), default=None
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class QuestionnaireResponseRow(Base):
    """One answer to one questionnaire item after a session, by a person or a simulated one."""

    __tablename__ = "questionnaire_responses"
    __table_args__ = (
        UniqueConstraint("session_id", "respondent", "item_id", name="uq_questionnaire_answer"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    respondent: Mapped[str] = mapped_column(String(200))
    simulated: Mapped[bool] = mapped_column(Boolean, default=False)
    item_id: Mapped[str] = mapped_column(String(100))
    value_num: Mapped[float | None] = mapped_column(Float, default=None)
    value_text: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    provenance: Mapped[JsonObject] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AnnotationPassRow(Base):
    """One annotator's answers to one category for one dialogue (one repeat of it).

    Passes are stored as they are; disagreements between passes are kept, not voted away.
    """

    __tablename__ = "annotation_passes"
    __table_args__ = (
        UniqueConstraint(
            "session_id", "category", "annotator", "pass_no", "repeat_no", name="uq_pass"
        ),
        Index("ix_passes_session", "session_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    category: Mapped[str] = mapped_column(String(100))
    annotator: Mapped[str] = mapped_column(String(200))
    annotator_kind: Mapped[str] = mapped_column(String(32))
    pass_no: Mapped[int] = mapped_column(Integer, default=0)
    repeat_no: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(32), default="ok")
    error: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
    note: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    provenance: Mapped[JsonObject] = mapped_column(default=dict)
    user_id: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The judge's model calls for this pass (0 for rules and people); NULL: not recorded.
    model_calls: Mapped[int | None] = mapped_column(Integer, default=None)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer, default=None)
    completion_tokens: Mapped[int | None] = mapped_column(Integer, default=None)

    answers: Mapped[list[AnnotationAnswerRow]] = relationship(
        cascade="all, delete-orphan", passive_deletes=True
    )


class AnnotationAnswerRow(Base):
    __tablename__ = "annotation_answers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    pass_id: Mapped[int] = mapped_column(
        ForeignKey("annotation_passes.id", ondelete="CASCADE"), index=True
    )
    question_id: Mapped[str] = mapped_column(String(100))
    turn_index: Mapped[int | None] = mapped_column(Integer, default=None)
    value_num: Mapped[float | None] = mapped_column(Float, default=None)
    value_text: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    reasoning: Mapped[str | None] = mapped_column(UntrustedText, default=None)


class AnnotationConsensusRow(Base):
    """The settled value of repeated runs of one annotator on one question, with its stability."""

    __tablename__ = "annotation_consensus"
    __table_args__ = (
        UniqueConstraint(
            "session_id", "category", "annotator", "question_id", "turn_index", name="uq_consensus"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    category: Mapped[str] = mapped_column(String(100))
    annotator: Mapped[str] = mapped_column(String(200))
    question_id: Mapped[str] = mapped_column(String(100))
    turn_index: Mapped[int | None] = mapped_column(Integer, default=None)
    value_num: Mapped[float | None] = mapped_column(Float, default=None)
    value_text: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    method: Mapped[str] = mapped_column(String(32))
    n_runs: Mapped[int] = mapped_column(Integer)
    flip_rate: Mapped[float] = mapped_column(Float)


class ResolutionRow(Base):
    """A senior annotator's resolution of a disagreement, recorded next to the passes."""

    __tablename__ = "resolutions"
    __table_args__ = (
        # One resolution per disputed answer; a dialogue-level answer has no turn (NULL),
        # which a plain unique constraint would treat as always distinct.
        Index(
            "uq_resolution",
            "session_id",
            "category",
            "question_id",
            func.coalesce(text("turn_index"), -1),
            unique=True,
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    category: Mapped[str] = mapped_column(String(100))
    question_id: Mapped[str] = mapped_column(String(100))
    turn_index: Mapped[int | None] = mapped_column(Integer, default=None)
    status: Mapped[str] = mapped_column(String(32))
    value_num: Mapped[float | None] = mapped_column(Float, default=None)
    value_text: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    note: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    resolved_by: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
