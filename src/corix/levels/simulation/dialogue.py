"""The dialogue loop shared by both engines: one application session, turn by turn.

Each turn is stored as it completes. The loop ends when the packet checks see the goal
reached, at the turn limit, when the simulated user stops (satisfied, giving up, or failing
as a simulator), or after two application errors in a row: a user retries once after an
error, but does not keep talking to an application that has stopped answering.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from corix.apps import Application, ApplicationError, AppReply, AppSession
from corix.domain import EndReason, TurnRecord
from corix.levels.recorder import SessionRecorder
from corix.levels.simulation.engine import Say, SimulatedUser, Stop
from corix.levels.simulation.progress import GoalTracker, TurnOutcome
from corix.llm import raise_if_cancelling
from corix.scenarios import Toolbox

MAX_APP_ERRORS_IN_A_ROW = 2


@dataclass(frozen=True)
class DialogueEnd:
    reason: EndReason
    detail: str = ""


async def run_dialogue(
    user: SimulatedUser,
    app: Application,
    recorder: SessionRecorder,
    tracker: GoalTracker,
    *,
    max_turns: int,
    toolbox: Toolbox | None = None,
) -> DialogueEnd:
    """Play ``user`` against a new session of ``app`` (given ``toolbox``, the pack's tools,
    if it takes tools); return why the dialogue ended."""
    move = await user.next_move(None, None)
    if isinstance(move, Stop):
        return DialogueEnd(move.reason, move.detail)
    async with app.session_slot():
        try:
            session = await app.open_session(toolbox)
        except Exception as exc:  # adapters should raise ApplicationError; any is recorded
            raise_if_cancelling()
            reason = (
                str(exc) if isinstance(exc, ApplicationError) else f"{type(exc).__name__}: {exc}"
            )
            reply = AppReply(error=f"could not start a session: {reason}")
            tracker.observe(recorder.record_turn(move.text, reply, 0.0, move.meta))
            return DialogueEnd(EndReason.APP_ERROR, reason)
        try:
            return await _converse(user, session, move, recorder, tracker, max_turns)
        finally:
            await session.end()


async def _converse(
    user: SimulatedUser,
    session: AppSession,
    move: Say,
    recorder: SessionRecorder,
    tracker: GoalTracker,
    max_turns: int,
) -> DialogueEnd:
    errors_in_a_row = 0
    while True:
        turn = await _exchange(session, move, recorder)
        outcome = tracker.observe(turn)
        errors_in_a_row = errors_in_a_row + 1 if outcome is TurnOutcome.ERROR else 0
        if errors_in_a_row >= MAX_APP_ERRORS_IN_A_ROW:
            return DialogueEnd(
                EndReason.APP_ERROR, f"{errors_in_a_row} application errors in a row"
            )
        if tracker.goal_reached:
            return DialogueEnd(EndReason.GOAL_REACHED, "the packet checks saw the goal reached")
        if len(recorder.turns) >= max_turns:
            return DialogueEnd(EndReason.TURN_LIMIT)
        next_move = await user.next_move(turn, outcome)
        if isinstance(next_move, Stop):
            return DialogueEnd(next_move.reason, next_move.detail)
        move = next_move


async def _exchange(session: AppSession, move: Say, recorder: SessionRecorder) -> TurnRecord:
    started = time.perf_counter()
    try:
        reply = await session.respond(move.text)
    except Exception as exc:  # an adapter that raises instead of returning an error
        raise_if_cancelling()  # a stop is not the application's error: store nothing
        reply = AppReply(error=f"{type(exc).__name__}: {exc}")
    latency_ms = (time.perf_counter() - started) * 1000
    return recorder.record_turn(move.text, reply, latency_ms, move.meta)
