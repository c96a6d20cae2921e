"""ORM rows of the web testbed: accounts, invitations, assignments and the annotation queue.

Human sessions, questionnaire answers, annotation passes and resolutions live in the shared
tables of :mod:`corix.storage.orm`; the rows here only organise the people who make them.
Secrets (session and invitation tokens) are stored as SHA-256 digests, never in clear.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from corix.domain import JsonObject
from corix.storage.clock import utcnow
from corix.storage.orm import Base
from corix.storage.text import UntrustedText

TOKEN_DIGEST_LENGTH = 64  # hex SHA-256


class UserRow(Base):
    """A person who signs in: admin, tester or annotator."""

    __tablename__ = "web_users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(32))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LoginSessionRow(Base):
    """A signed-in browser. Deleting the row signs it out everywhere at once."""

    __tablename__ = "web_login_sessions"

    token_digest: Mapped[str] = mapped_column(String(TOKEN_DIGEST_LENGTH), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("web_users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class InvitationRow(Base):
    """A single-use link that lets a person choose their own password for a given role."""

    __tablename__ = "web_invitations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_digest: Mapped[str] = mapped_column(String(TOKEN_DIGEST_LENGTH), unique=True)
    role: Mapped[str] = mapped_column(String(32))
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("web_users.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    used_by: Mapped[int | None] = mapped_column(
        ForeignKey("web_users.id", ondelete="SET NULL"), default=None
    )


class ApplicationOptionsRow(Base):
    """Adapter options of an application registered in the web app (``applications.spec``
    holds the public ``KIND:TARGET`` part, as for applications registered by a plan)."""

    __tablename__ = "web_application_options"

    application_id: Mapped[int] = mapped_column(
        ForeignKey("applications.id", ondelete="CASCADE"), primary_key=True
    )
    options: Mapped[JsonObject] = mapped_column(default=dict)


class EvaluationSettingsRow(Base):
    """How an evaluation series runs its human work."""

    __tablename__ = "web_evaluation_settings"

    evaluation_id: Mapped[str] = mapped_column(
        ForeignKey("evaluations.id", ondelete="CASCADE"), primary_key=True
    )
    passes_per_item: Mapped[int] = mapped_column(Integer, default=3)
    review_rate: Mapped[float] = mapped_column(Float, default=0.2)
    max_turns: Mapped[int] = mapped_column(Integer, default=30)
    # How testers meet applications ("counterbalanced" or "random"), and which human
    # sessions go to human annotators ("all", "sample" of N per cell, the series' label
    # "plan", or "none").
    assignment_design: Mapped[str] = mapped_column(String(32), default="counterbalanced")
    human_annotation: Mapped[str] = mapped_column(String(32), default="all")
    annotation_sample_size: Mapped[int] = mapped_column(Integer, default=0)
    claim_minutes: Mapped[float | None] = mapped_column(Float, default=None)
    """How long a claimed dialogue stays with its annotator; NULL: the server's default."""


class LabelPlanRow(Base):
    """A dialogue a series' label plan (``corix plan labels``) asks people to label."""

    __tablename__ = "web_label_plan"

    evaluation_id: Mapped[str] = mapped_column(
        ForeignKey("evaluations.id", ondelete="CASCADE"), primary_key=True
    )
    session_id: Mapped[str] = mapped_column(
        ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True
    )


class ApplicationStatusRow(Base):
    """An application's lifecycle in the web testbed: its registration check and retirement.

    Editing an application registers a new row (a new version); the old one is retired and
    points to its successor, so sessions keep naming the version they talked to.
    """

    __tablename__ = "web_application_status"

    application_id: Mapped[int] = mapped_column(
        ForeignKey("applications.id", ondelete="CASCADE"), primary_key=True
    )
    check: Mapped[JsonObject] = mapped_column(default=dict)
    checked_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    retired_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    replaced_by: Mapped[int | None] = mapped_column(
        ForeignKey("applications.id", ondelete="SET NULL"), default=None
    )


class AssignmentRow(Base):
    """One tester's slot: an application × scenario at the tester's level.

    Testers only ever see ``token``; the application stays on the server. ``briefing`` is
    the persona and goal (target or task) the tester plays, drawn from the scenario pack.
    """

    __tablename__ = "web_assignments"
    __table_args__ = (Index("ix_assignments_user", "user_id", "position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    evaluation_id: Mapped[str] = mapped_column(ForeignKey("evaluations.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("web_users.id", ondelete="CASCADE"))
    application_id: Mapped[int] = mapped_column(ForeignKey("applications.id"))
    scenario: Mapped[str] = mapped_column(String(100))
    level: Mapped[str] = mapped_column(String(32))
    position: Mapped[int] = mapped_column(Integer)
    briefing: Mapped[JsonObject | None] = mapped_column(default=None)
    status: Mapped[str] = mapped_column(String(32), default="assigned")
    session_id: Mapped[str | None] = mapped_column(
        ForeignKey("sessions.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)


class AnnotatorQueueRow(Base):
    """An annotator's assignment to one category of one evaluation series."""

    __tablename__ = "web_annotator_queues"
    __table_args__ = (
        UniqueConstraint("evaluation_id", "user_id", "category", name="uq_annotator_queue"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    evaluation_id: Mapped[str] = mapped_column(ForeignKey("evaluations.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("web_users.id", ondelete="CASCADE"))
    category: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AnnotationTaskRow(Base):
    """A dialogue handed to one annotator for one category: a pass in the making.

    The unique constraints are the queue's promises: nobody gets the same item twice,
    and each pass number of an item goes to one person.
    """

    __tablename__ = "web_annotation_tasks"
    __table_args__ = (
        UniqueConstraint("session_id", "category", "user_id", name="uq_task_annotator"),
        UniqueConstraint("session_id", "category", "pass_no", name="uq_task_pass"),
        Index("ix_tasks_queue", "evaluation_id", "category", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    evaluation_id: Mapped[str] = mapped_column(ForeignKey("evaluations.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("web_users.id", ondelete="CASCADE"))
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    category: Mapped[str] = mapped_column(String(100))
    pass_no: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(32), default="open")
    pass_id: Mapped[int | None] = mapped_column(
        ForeignKey("annotation_passes.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    seconds_on_item: Mapped[float | None] = mapped_column(Float, default=None)
    """Time the dialogue was in view while its pass was made (the pass is ``pass_id``)."""


class ExpiredClaimRow(Base):
    """A claim that ran out and went back to the queue, kept by its token so the annotator
    who comes back to it can be answered (re-claimed, or told plainly that it was taken)."""

    __tablename__ = "web_expired_claims"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    evaluation_id: Mapped[str] = mapped_column(ForeignKey("evaluations.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("web_users.id", ondelete="CASCADE"))
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    category: Mapped[str] = mapped_column(String(100))
    claimed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class QualificationAttemptRow(Base):
    """One attempt at the qualification test on gold dialogues."""

    __tablename__ = "web_qualification_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("web_users.id", ondelete="CASCADE"), index=True)
    test_version: Mapped[str] = mapped_column(String(100))
    score: Mapped[float] = mapped_column(Float)
    pass_mark: Mapped[float] = mapped_column(Float)
    passed: Mapped[bool] = mapped_column(Boolean)
    answers: Mapped[JsonObject] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class QualificationDrawRow(Base):
    """The gold dialogues drawn for one attempt; the attempt fills ``attempt_id`` on submit.

    The draw is made and kept server-side when the test is opened, so a form cannot choose
    its own dialogues and a retake cannot reuse a draw whose feedback was seen.
    """

    __tablename__ = "web_qualification_draws"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("web_users.id", ondelete="CASCADE"), index=True)
    test_version: Mapped[str] = mapped_column(String(100))
    dialogue_ids: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    attempt_id: Mapped[int | None] = mapped_column(
        ForeignKey("web_qualification_attempts.id", ondelete="CASCADE"), default=None
    )


class PassReviewRow(Base):
    """A senior annotator's review of one sampled pass."""

    __tablename__ = "web_pass_reviews"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    pass_id: Mapped[int] = mapped_column(
        ForeignKey("annotation_passes.id", ondelete="CASCADE"), unique=True
    )
    reviewer_id: Mapped[int | None] = mapped_column(
        ForeignKey("web_users.id", ondelete="SET NULL"), default=None
    )
    verdict: Mapped[str] = mapped_column(String(32))
    note: Mapped[str | None] = mapped_column(UntrustedText, default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SignInThrottleRow(Base):
    """Recent failed sign-ins of one subject (``account:NAME`` or ``address:IP``).

    Kept in the database so that every server process, on every host, counts the same
    failures; an attempt is counted when it starts, under the row's lock.
    """

    __tablename__ = "web_sign_in_throttle"

    subject: Mapped[str] = mapped_column(String(320), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    first_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    """When the current window of failures began."""
    last_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
