"""Records one session into the writer: the row first, each turn as it completes, then the end."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from corix.apps import AppReply, AppSession
from corix.domain import EndReason, ModelUsage, Provenance, SessionSource, TurnRecord
from corix.execution import RunContext, WorkItem
from corix.llm import raise_if_cancelling
from corix.storage import FAILED_END_REASONS, NewQuestionnaireAnswer, NewSession, SessionEnd


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
        self, text: str, reply: AppReply, latency_ms: float, meta: dict[str, Any] | None = None
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

    def record_answer(
        self,
        item_id: str,
        *,
        value: float | None,
        text: str | None,
        respondent: str,
        simulated: bool,
        provenance: dict[str, Any],
    ) -> None:
        self.ctx.writer.add_questionnaire_answer(
            NewQuestionnaireAnswer(
                session_id=self.session_id,
                item_id=item_id,
                respondent=respondent,
                simulated=simulated,
                value=value,
                text=text,
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


def _finish(reply: AppReply) -> dict[str, Any]:
    """The reply's ``finish_reason`` for the turn's meta, when the application gave one."""
    return {"finish_reason": reply.finish_reason} if reply.finish_reason else {}
