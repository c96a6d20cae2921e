"""Domain models: the one conversation record that flows through every layer.

These are plain pydantic models, kept apart from ORM rows (``corix.storage``) and API
schemas (``corix.web``).
"""

from corix.domain.records import (
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
    "EndReason",
    "Level",
    "Provenance",
    "QuestionnaireAnswer",
    "SessionBrief",
    "SessionRecord",
    "SessionSource",
    "SessionStatus",
    "TurnRecord",
]
