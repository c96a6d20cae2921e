"""Domain models: the one conversation record that flows through every layer.

These are plain pydantic models, kept apart from ORM rows (``corix.storage``) and API
schemas (``corix.web``).
"""

from corix.domain.annotation_jobs import AnnotationJobSettings, EndpointIdentity, public_url
from corix.domain.reports import ReportFormat, ReportOutput, ReportTree, WrittenReportSettings
from corix.domain.runs import RUN_SUMMARY_VERSION, Invocation, RunSummary, RunUsage
from corix.domain.session_records import (
    EndReason,
    ImportedSource,
    Level,
    ModelUsage,
    Provenance,
    QuestionnaireAnswer,
    SessionBrief,
    SessionRecord,
    SessionSource,
    SessionStatus,
    TurnRecord,
)

__all__ = [
    "RUN_SUMMARY_VERSION",
    "AnnotationJobSettings",
    "EndReason",
    "EndpointIdentity",
    "ImportedSource",
    "Invocation",
    "Level",
    "ModelUsage",
    "Provenance",
    "QuestionnaireAnswer",
    "ReportFormat",
    "ReportOutput",
    "ReportTree",
    "RunSummary",
    "RunUsage",
    "SessionBrief",
    "SessionRecord",
    "SessionSource",
    "SessionStatus",
    "TurnRecord",
    "WrittenReportSettings",
    "public_url",
]
