"""Domain models: the one conversation record that flows through every layer.

These are plain pydantic models, kept apart from ORM rows (``corix.storage``) and API
schemas (``corix.web``).
"""

from corix.domain.annotation_jobs import AnnotationJobSettings, EndpointIdentity, public_url
from corix.domain.reports import ReportFormat, ReportOutput, ReportTree, WrittenReportSettings
from corix.domain.session_records import (
    EndReason,
    Level,
    Provenance,
    QuestionnaireAnswer,
    SessionBrief,
    SessionRecord,
    SessionSource,
    SessionStatus,
    TurnRecord,
)

__all__ = [
    "AnnotationJobSettings",
    "EndReason",
    "EndpointIdentity",
    "Level",
    "Provenance",
    "QuestionnaireAnswer",
    "ReportFormat",
    "ReportOutput",
    "ReportTree",
    "SessionBrief",
    "SessionRecord",
    "SessionSource",
    "SessionStatus",
    "TurnRecord",
    "WrittenReportSettings",
    "public_url",
]
