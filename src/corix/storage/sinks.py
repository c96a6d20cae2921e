"""Where a running session's records go: the database writer, or a collection to ship.

Handlers write through a :class:`RecordSink`. In one process that is the group-committing
:class:`~corix.storage.RecordWriter`. A worker on another process or machine that cannot
write the database itself (SQLite lives in one file on the driver's disk) collects its
records in :class:`CollectedRecords` and sends them back; the driver replays them into its
writer, so every record still reaches the database through one path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from corix.storage.writer import RecordWriter

__all__ = ["AnnotationSink", "CollectedRecords", "RecordSink"]


class RecordSink(Protocol):
    """What handlers write sessions into (see :class:`~corix.storage.RecordWriter`)."""

    def start_session(self, row: dict[str, Any]) -> None: ...

    def add_turn(self, row: dict[str, Any]) -> None: ...

    def add_questionnaire_answer(self, row: dict[str, Any]) -> None: ...

    def finish_session(
        self,
        session_id: str,
        *,
        end_reason: str | None,
        end_detail: str | None = None,
        first_success_turn: int | None = None,
        ended_at: datetime | None = None,
    ) -> None: ...


class AnnotationSink(Protocol):
    """What annotation writes passes and consensus rows into."""

    def add_pass(self, pass_row: dict[str, Any], answers: list[dict[str, Any]]) -> None: ...

    def add_consensus(self, row: dict[str, Any]) -> None: ...


@dataclass
class CollectedRecords:
    """A sink that only keeps what it is given, in order, as plain picklable rows."""

    sessions: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)
    finished: list[dict[str, Any]] = field(default_factory=list)
    passes: list[tuple[dict[str, Any], list[dict[str, Any]]]] = field(default_factory=list)
    consensus: list[dict[str, Any]] = field(default_factory=list)

    def start_session(self, row: dict[str, Any]) -> None:
        self.sessions.append(row)

    def add_turn(self, row: dict[str, Any]) -> None:
        self.turns.append(row)

    def add_questionnaire_answer(self, row: dict[str, Any]) -> None:
        self.answers.append(row)

    def finish_session(
        self,
        session_id: str,
        *,
        end_reason: str | None,
        end_detail: str | None = None,
        first_success_turn: int | None = None,
        ended_at: datetime | None = None,
    ) -> None:
        self.finished.append(
            {
                "session_id": session_id,
                "end_reason": end_reason,
                "end_detail": end_detail,
                "first_success_turn": first_success_turn,
                "ended_at": ended_at,
            }
        )

    def add_pass(self, pass_row: dict[str, Any], answers: list[dict[str, Any]]) -> None:
        self.passes.append((pass_row, answers))

    def add_consensus(self, row: dict[str, Any]) -> None:
        self.consensus.append(row)

    def replay(self, sink: RecordWriter) -> None:
        """Hand every record to ``sink``: sessions before their turns, ends and passes last."""
        for row in self.sessions:
            sink.start_session(row)
        for row in self.turns:
            sink.add_turn(row)
        for row in self.answers:
            sink.add_questionnaire_answer(row)
        for end in self.finished:
            sink.finish_session(
                end["session_id"],
                end_reason=end["end_reason"],
                end_detail=end["end_detail"],
                first_success_turn=end["first_success_turn"],
                ended_at=end["ended_at"],
            )
        for pass_row, answers in self.passes:
            sink.add_pass(pass_row, answers)
        for row in self.consensus:
            sink.add_consensus(row)
