"""Group-committing writer: turns and answers are persisted as they complete.

Model calls finish at a high rate; one transaction per turn would make the database the
bottleneck. The writer collects records for up to ``max_delay_s`` (0.2 s) and commits
them together in a worker thread, so a killed run loses at most the records of the last
open batch. Each commit has a cost of its own (the transaction, the lease's check, the
pages SQLite writes again): at 500 model calls a second, committing every 50 ms instead
cost about 60 µs of the writer's CPU per session more.

A record the database refuses never takes its batch with it: the batch is committed again
record by record, and a session that lost one of its records is accounted for as failed
(end reason ``storage_error``, the refused record and the reason as its detail) when its
end is written, which always follows its turns, so no session looks complete with a turn
missing.

A database that takes no writes at all (full disk, read-only, locked, gone) is another
matter: the writer stops, tells ``on_unavailable`` at once (a run stops its work then),
and leaving the ``async with`` raises :class:`StorageUnavailable` with the cause. What
was committed before stays; the records of the failed batch are lost with the run's
in-flight work, which ``--resume`` redoes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from corix.domain import EndReason, TurnRecord
from corix.storage.annotations import add_consensus, add_passes
from corix.storage.clock import utcnow
from corix.storage.database import Database
from corix.storage.run_lease import LeaseFence, LeaseLost, check_fence
from corix.storage.sessions import (
    NewTurn,
    SessionEnd,
    add_questionnaire_answers,
    add_turns,
    finish_sessions,
    start_sessions,
)
from corix.storage.store_records import (
    NewPass,
    NewQuestionnaireAnswer,
    NewSession,
    StoredConsensus,
)
from corix.storage.unavailable import StorageUnavailable, storage_trouble

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rejected:
    """A record the database refused on its own: what it was, whose, and why."""

    record: str
    reason: str
    session_id: str | None = None


@dataclass
class _Batch:
    sessions: list[NewSession] = field(default_factory=list)
    turns: list[NewTurn] = field(default_factory=list)
    answers: list[NewQuestionnaireAnswer] = field(default_factory=list)
    finished: list[SessionEnd] = field(default_factory=list)
    passes: list[NewPass] = field(default_factory=list)
    consensus: list[StoredConsensus] = field(default_factory=list)

    def singles(self) -> Iterator[tuple[str, str | None, _Batch]]:
        """Each record as a batch of its own, in commit order, with a name for errors and
        the session it belongs to."""
        for session in self.sessions:
            yield f"session {session.id}", session.id, _Batch(sessions=[session])
        for new in self.turns:
            name = f"turn {new.turn.index} of {new.session_id}"
            yield name, new.session_id, _Batch(turns=[new])
        for answer in self.answers:
            yield f"answer of {answer.session_id}", answer.session_id, _Batch(answers=[answer])
        for end in self.finished:
            yield f"end of session {end.session_id}", end.session_id, _Batch(finished=[end])
        for annotation in self.passes:
            yield (
                f"pass {annotation.annotator} on {annotation.session_id}",
                None,
                _Batch(passes=[annotation]),
            )
        for row in self.consensus:
            yield f"consensus of {row.session_id}", None, _Batch(consensus=[row])


class RecordWriter:
    """Async front, synchronous batched commits behind. Use as ``async with``."""

    def __init__(
        self,
        db: Database,
        *,
        max_batch: int = 500,
        max_delay_s: float = 0.2,
        max_backlog: int = 10_000,
        on_unavailable: Callable[[str], None] | None = None,
        fence: LeaseFence | None = None,
        on_lost: Callable[[LeaseLost], None] | None = None,
    ) -> None:
        self._db = db
        self._on_unavailable = on_unavailable
        self.unavailable: str | None = None
        """Why the database stopped taking writes, once it did."""
        self._fence = fence
        self._on_lost = on_lost
        self.lost: LeaseLost | None = None
        """Set once a batch was refused because another process took the run over: the
        writer commits nothing more, and leaving it raises this."""
        self._max_batch = max_batch
        self._max_delay_s = max_delay_s
        self._max_backlog = max_backlog
        self._batch = _Batch()
        self._waiting = 0
        """Records in ``_batch``: counted as they come, as every record asks how many wait."""
        self._wakeup = asyncio.Event()
        self._committed = asyncio.Event()
        self._closed = False
        self._task: asyncio.Task[None] | None = None
        self.committed_turns = 0
        self.rejected: list[Rejected] = []
        """Records the database refused even on their own, with the reason."""
        self._refused_sessions: dict[str, str] = {}
        """Sessions that lost a record, with the first refusal in words."""

    async def __aenter__(self) -> RecordWriter:
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self._closed = True
        self._wakeup.set()
        if self._task is not None:
            await self._task
        if self.unavailable is not None:
            raise StorageUnavailable(self.unavailable)
        if self.lost is not None:
            raise self.lost

    # -- enqueue -------------------------------------------------------------------------
    def start_session(self, session: NewSession) -> None:
        self._batch.sessions.append(session)
        self._poke()

    def add_turn(self, session_id: str, turn: TurnRecord) -> None:
        if turn.created_at is None:  # when it was made, not when its batch commits
            turn = turn.model_copy(update={"created_at": utcnow()})
        self._batch.turns.append(NewTurn(session_id, turn))
        self._poke()

    def add_questionnaire_answer(self, answer: NewQuestionnaireAnswer) -> None:
        self._batch.answers.append(answer)
        self._poke()

    def finish_session(self, end: SessionEnd) -> None:
        """End a session (:class:`SessionEnd` says how)."""
        self._batch.finished.append(end)
        self._poke()

    def add_pass(self, new: NewPass) -> None:
        self._batch.passes.append(new)
        self._poke()

    def add_consensus(self, consensus: StoredConsensus) -> None:
        self._batch.consensus.append(consensus)
        self._poke()

    async def room(self) -> None:
        """Wait while more than ``max_backlog`` records wait for their commit: work that
        makes records faster than the database takes them must not fill the memory."""
        while (
            self._waiting >= self._max_backlog
            and not self._closed
            and self.unavailable is None
            and self.lost is None
        ):
            self._committed.clear()
            self._wakeup.set()
            await self._committed.wait()

    def _poke(self) -> None:
        self._waiting += 1
        if self._waiting >= self._max_batch:
            self._wakeup.set()

    # -- commit --------------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), timeout=self._max_delay_s)
            self._wakeup.clear()
            if self._waiting:
                batch, self._batch, self._waiting = self._batch, _Batch(), 0
                try:
                    await asyncio.to_thread(self._commit, batch)
                except StorageUnavailable as exc:
                    self._stop(str(exc))
                    return
                except LeaseLost as exc:  # the batch was rolled back: the new holder redoes it
                    self.lost = exc
                    self._committed.set()
                    if self._on_lost is not None:
                        self._on_lost(exc)
                    return
                self._committed.set()
            if self._closed and not self._waiting:
                return

    def _stop(self, cause: str) -> None:
        # Info, not an error: the caller reports the stop in one line (the CLI, exit 7).
        logger.info("the database stopped taking writes: %s", cause)
        self.unavailable = cause
        self._committed.set()  # wakes room(), which now lets everyone through
        if self._on_unavailable is not None:
            self._on_unavailable(cause)

    def _commit(self, batch: _Batch) -> None:
        try:
            self._commit_batch(batch)
        except SQLAlchemyError as exc:
            _raise_if_unavailable(exc)
            # Refused because the run was taken over (its half-done sessions dropped by the
            # new holder)? Then no record of this batch is ours to write any more.
            self._check_fence()
            # One bad record must not take the batch, other runs' sessions included, with
            # it: commit each record on its own and keep the refusals with their reasons.
            for name, session_id, single in batch.singles():
                try:
                    self._commit_batch(single)
                except SQLAlchemyError as single_exc:
                    _raise_if_unavailable(single_exc)
                    self._refuse(name, session_id, single_exc)

    def _check_fence(self) -> None:
        if self._fence is not None:
            with self._db.session() as db:
                check_fence(db, self._fence)

    def _refuse(self, name: str, session_id: str | None, exc: SQLAlchemyError) -> None:
        reason = str(exc.orig if isinstance(exc, DBAPIError) else exc).splitlines()[0][:500]
        self.rejected.append(Rejected(name, reason, session_id))
        logger.warning("the database refused %s: %s", name, reason)
        if session_id is not None:
            self._refused_sessions.setdefault(session_id, f"the database refused {name}: {reason}")

    def _as_refused(self, end: SessionEnd) -> SessionEnd:
        """A session's end, saying it failed when one of its records was refused."""
        detail = self._refused_sessions.get(end.session_id)
        if detail is None:
            return end
        return replace(end, end_reason=EndReason.STORAGE_ERROR, end_detail=detail)

    def _commit_batch(self, batch: _Batch) -> None:
        # Order matters: a session is inserted before its turns and before it is finished.
        ends = [self._as_refused(end) for end in batch.finished]
        started = {session.id for session in batch.sessions}
        # A session that starts and ends in this batch is inserted complete.
        ended_here = {end.session_id: end for end in ends if end.session_id in started}
        with self._db.session() as db:
            start_sessions(db, batch.sessions, ended_here)
            add_turns(db, batch.turns)
            add_questionnaire_answers(db, batch.answers)
            finish_sessions(db, [end for end in ends if end.session_id not in ended_here])
            add_passes(db, batch.passes)
            add_consensus(db, batch.consensus)
            if self._fence is not None:  # last: see check_fence
                check_fence(db, self._fence)
        self.committed_turns += len(batch.turns)


def _raise_if_unavailable(exc: SQLAlchemyError) -> None:
    cause = storage_trouble(exc)
    if cause is not None:
        raise StorageUnavailable(cause) from exc
