"""Domain models: the one conversation record that flows through every layer.

These are plain pydantic models, kept apart from ORM rows (``corix.storage``) and API
schemas (``corix.web``).
"""

from corix.domain.annotation_jobs import AnnotationJobSettings, EndpointIdentity, public_url
from corix.domain.json_values import JsonObject, JsonSchema
from corix.domain.messages import (
    ContentPart,
    Message,
    MessageRole,
    ToolCall,
    split_turns,
)
from corix.domain.reports import ReportFormat, ReportOutput, ReportTree, WrittenReportSettings
from corix.domain.run_file import (
    RUN_FILE_FORMAT,
    RUN_FILE_VERSION,
    ArchivedAnnotationJob,
    ArchivedApplication,
    ArchivedConsensus,
    ArchivedPack,
    ArchivedPass,
    ArchivedPassAnswer,
    ArchivedQuestionnaireAnswer,
    ArchivedReport,
    ArchivedResolution,
    ArchivedRun,
    ArchivedSession,
    RunDocument,
    SessionLine,
)
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
from corix.domain.transcript_steps import StepKind, StepView, render_steps, step_views

__all__ = [
    "RUN_FILE_FORMAT",
    "RUN_FILE_VERSION",
    "RUN_SUMMARY_VERSION",
    "AnnotationJobSettings",
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
    "ContentPart",
    "EndReason",
    "EndpointIdentity",
    "ImportedSource",
    "Invocation",
    "JsonObject",
    "JsonSchema",
    "Level",
    "Message",
    "MessageRole",
    "ModelUsage",
    "Provenance",
    "QuestionnaireAnswer",
    "ReportFormat",
    "ReportOutput",
    "ReportTree",
    "RunDocument",
    "RunSummary",
    "RunUsage",
    "SessionBrief",
    "SessionLine",
    "SessionRecord",
    "SessionSource",
    "SessionStatus",
    "StepKind",
    "StepView",
    "ToolCall",
    "TurnRecord",
    "WrittenReportSettings",
    "public_url",
    "render_steps",
    "split_turns",
    "step_views",
]
