"""JSON the browser receives, kept apart from ORM rows and domain models.

These are the only shapes the chat script sees; they carry the dialogue and nothing that
could identify the application.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from corix.web.services.tester_sessions import ChatTurn


class TurnOut(BaseModel):
    """One completed turn, as the chat script appends it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    user_text: str
    reply: str
    failed: bool
    restarted: bool
    """The application lost the dialogue before this turn: the chat shows the marker."""

    @classmethod
    def of(cls, turn: ChatTurn, failed_reply: str) -> TurnOut:
        return cls(
            index=turn.index,
            user_text=turn.user_text,
            reply=turn.reply if turn.reply is not None else failed_reply,
            failed=turn.reply is None,
            restarted=turn.restarted,
        )


class ErrorOut(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    error: str
    at_limit: bool = False
    """The session is at its message limit: the chat shows the notice, not the error."""
