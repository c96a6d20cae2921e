"""Records one session into the writer: the row first, each turn as it completes, then the end."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TypedDict

from corix.apps import AppReply, AppSession
from corix.domain import EndReason, ModelUsage, Provenance, SessionSource, TurnRecord
from corix.execution import RunContext, WorkItem
from corix.llm import raise_if_cancelling
from corix.storage import FAILED_END_REASONS, NewQuestionnaireAnswer, NewSession, SessionEnd


class TurnMeta(TypedDict, total=False):
    """What the testing levels store in a turn's ``meta``: how the user's message was
    written (the ``engine``, ``scripted`` or ``llm``; its red-team ``strategy`` and
    ``move`` or field-test ``style``; a model's ``reasks`` and their ``problems``, the
    repairs made, a ``fallback`` to the scripted engine) and the reply's ``finish_reason``."""

    engine: str
    strategy: str
    move: str
    style: str
    reasks: int
    problems: list[str]
    stripped_tags: int
    copied_sentences_cut: int
    context_cut: dict[str, int]
    fallback: str
    finish_reason: str


class SessionRecorder:
    """Stores a dialogue as it happens, so that a killed run loses only what was in flight."""

    def __init__(
        self,
        ctx: RunContext,
        item: WorkItem,
        *,
        source: SessionSource,
        provenance: Provenance,
        persona: str | None = None,
        strategy: str | None = None,
    ) -> None:
        self.ctx = ctx
        self.item = item
        self.session_id = uuid.uuid4().hex
        self.turns: list[TurnRecord] = []
        self._provenance = provenance
        app = ctx.applications[item.application]
        ctx.writer.start_session(
            NewSession(
                id=self.session_id,
                run_id=item.run_id,
                work_key=item.key,
                application_id=app.db_id,
                scenario=item.scenario,
                level=item.level,
                source=source,
                provenance=provenance,
                persona=persona,
                strategy=strategy,
            )
        )

    async def exchange(self, session: AppSession, text: str) -> TurnRecord:
        """Send one user message, store the turn (reply or error) and return it."""
        started = time.perf_counter()
        try:
            reply = await session.respond(text)
        except Exception as exc:  # an adapter that raises instead of returning an error
            raise_if_cancelling()  # a stop is not the application's error: store nothing
            reply = AppReply(error=f"{type(exc).__name__}: {exc}")
        latency_ms = (time.perf_counter() - started) * 1000
        return self.record_turn(text, reply, latency_ms)

    def record_turn(
        self, text: str, reply: AppReply, latency_ms: float, meta: TurnMeta | None = None
    ) -> TurnRecord:
        turn = reply.turn(
            len(self.turns),
            text,
            latency_ms=latency_ms,
            created_at=datetime.now(UTC),
            meta={**(meta or {}), **_finish(reply)},
        )
        self.turns.append(turn)
        self.ctx.writer.add_turn(self.session_id, turn)
        return turn

    def record_answers(
        self, answers: Mapping[str, float | str], *, respondent: str, answered_by: str
    ) -> None:
        """Store a simulated tester's questionnaire answers (Likert points as numbers, the
        rest as text); each keeps the session's provenance and who answered (``rules`` or
        ``in_character``)."""
        provenance = {**self._provenance.model_dump(mode="json"), "answered_by": answered_by}
        for item_id, value in answers.items():
            self.ctx.writer.add_questionnaire_answer(
                NewQuestionnaireAnswer(
                    session_id=self.session_id,
                    item_id=item_id,
                    respondent=respondent,
                    simulated=True,
                    value=value if isinstance(value, float) else None,
                    text=value if isinstance(value, str) else None,
                    provenance=provenance,
                )
            )

    def finish(
        self,
        end_reason: EndReason,
        *,
        detail: str = "",
        first_success_turn: int | None = None,
        simulator: ModelUsage | None = None,
    ) -> None:
        """End the session. A failed session always stores why: ``detail``, or else the
        error of its last failed turn. ``simulator``: the simulated user's model calls
        (none when no model played the user)."""
        if end_reason in FAILED_END_REASONS and not detail:
            detail = next((turn.error for turn in reversed(self.turns) if turn.error), "")
        self.ctx.writer.finish_session(
            SessionEnd(
                self.session_id,
                end_reason=end_reason,
                end_detail=detail or None,
                first_success_turn=first_success_turn,
                simulator=simulator or ModelUsage(),
            )
        )
        if self.ctx.on_session_done is not None:
            self.ctx.on_session_done(self.item)


def _finish(reply: AppReply) -> TurnMeta:
    """The reply's ``finish_reason`` for the turn's meta, when the application gave one."""
    return {"finish_reason": reply.finish_reason} if reply.finish_reason else {}
