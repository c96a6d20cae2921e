"""Where a running session's records go: the database writer, or a collection to ship.

Handlers write through a :class:`RecordSink`. In one process that is the group-committing
:class:`~corix.storage.RecordWriter`. A worker on another process or machine that cannot
write the database itself (SQLite lives in one file on the driver's disk) collects its
records in :class:`CollectedRecords` and sends them back; the driver replays them into its
writer, so every record still reaches the database through one path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from corix.domain import TurnRecord
from corix.storage.sessions import SessionEnd
from corix.storage.store_records import NewPass, NewQuestionnaireAnswer, NewSession, StoredConsensus

if TYPE_CHECKING:
    from corix.storage.writer import RecordWriter

__all__ = ["AnnotationSink", "CollectedRecords", "RecordSink"]


class RecordSink(Protocol):
    """What handlers write sessions into (see :class:`~corix.storage.RecordWriter`)."""

    def start_session(self, session: NewSession) -> None: ...

    def add_turn(self, session_id: str, turn: TurnRecord) -> None: ...

    def add_questionnaire_answer(self, answer: NewQuestionnaireAnswer) -> None: ...

    def finish_session(self, end: SessionEnd) -> None: ...


class AnnotationSink(Protocol):
    """What annotation writes passes and consensus rows into."""

    def add_pass(self, new: NewPass) -> None: ...

    def add_consensus(self, consensus: StoredConsensus) -> None: ...


@dataclass
class CollectedRecords:
    """A sink that only keeps what it is given, in order, as picklable records."""

    sessions: list[NewSession] = field(default_factory=list)
    turns: list[tuple[str, TurnRecord]] = field(default_factory=list)
    answers: list[NewQuestionnaireAnswer] = field(default_factory=list)
    finished: list[SessionEnd] = field(default_factory=list)
    passes: list[NewPass] = field(default_factory=list)
    consensus: list[StoredConsensus] = field(default_factory=list)

    def start_session(self, session: NewSession) -> None:
        self.sessions.append(session)

    def add_turn(self, session_id: str, turn: TurnRecord) -> None:
        self.turns.append((session_id, turn))

    def add_questionnaire_answer(self, answer: NewQuestionnaireAnswer) -> None:
        self.answers.append(answer)

    def finish_session(self, end: SessionEnd) -> None:
        self.finished.append(end)

    def add_pass(self, new: NewPass) -> None:
        self.passes.append(new)

    def add_consensus(self, consensus: StoredConsensus) -> None:
        self.consensus.append(consensus)

    def replay(self, sink: RecordWriter) -> None:
        """Hand every record to ``sink``: sessions before their turns, ends and passes last."""
        for session in self.sessions:
            sink.start_session(session)
        for session_id, turn in self.turns:
            sink.add_turn(session_id, turn)
        for answer in self.answers:
            sink.add_questionnaire_answer(answer)
        for end in self.finished:
            sink.finish_session(end)
        for new in self.passes:
            sink.add_pass(new)
        for consensus in self.consensus:
            sink.add_consensus(consensus)
