"""A tester's side: assignments, the blinded chat, ending a session and the questionnaire.

Everything returned here is blinded by construction: the view models carry the assignment's
opaque token, the scenario and the dialogue, and no field that could name the application.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

import anyio

from corix.domain import JsonObject, Level, Provenance, SessionBrief, SessionSource, TurnRecord
from corix.scenarios import QuestionnaireItem, ScenarioPack, Toolbox, resolve_pack
from corix.storage import Database, NewQuestionnaireAnswer, NewSession, storable_text
from corix.storage.web import Duplicate, Transaction, WriteGate, transaction
from corix.storage.web import assignments as store
from corix.storage.web.assignments import AssignmentRecord
from corix.storage.web.dialogues import DialogueTurn, store_turn, turn_at, turn_count, turns
from corix.web.services.accounts import SignedInUser
from corix.web.services.clock import utcnow
from corix.web.services.evaluations import evaluation_settings, human_run_id
from corix.web.services.live_apps import LiveApplications
from corix.web.services.questionnaires import QuestionnaireValue, parse_questionnaire
from corix.web.services.service_errors import Conflict, Forbidden, InputError, NotFound


class Status:
    """An assignment's progress."""

    ASSIGNED = "assigned"
    IN_SESSION = "in_session"
    QUESTIONNAIRE = "questionnaire"
    DONE = "done"


# Marks in a turn's ``meta`` when the live dialogue was lost (a server restart) before it.
RESTARTED = "dialogue_restarted"
RESUMED = "dialogue_resumed"


class MessageLimitReached(Conflict):
    """A message past the session's limit; the chat replaces its form with the notice."""


@dataclass(frozen=True)
class TesterAssignment:
    token: str
    position: int
    scenario: str
    scenario_title: str
    level: Level
    status: str
    briefing: str | None
    """The persona and goal the tester plays, in the second person."""


@dataclass(frozen=True)
class ChatTurn:
    index: int
    user_text: str
    reply: str | None
    """``None`` when the application failed; the page shows a polite notice instead."""
    restarted: bool = False
    """The application lost the dialogue before this turn and started it afresh."""


@dataclass(frozen=True)
class ChatView:
    assignment: TesterAssignment
    turns: list[ChatTurn]
    max_turns: int

    @property
    def next_index(self) -> int:
        return len(self.turns)

    @property
    def at_limit(self) -> bool:
        return len(self.turns) >= self.max_turns


@dataclass(frozen=True)
class _TurnState:
    session_id: str
    application_id: int
    scenario: str
    turns: int
    max_turns: int
    earlier: ChatTurn | None
    """The stored turn at the index a resubmitted form claimed, if any."""


def respondent_of(user: SignedInUser) -> str:
    return f"user:{user.id}"


class TesterSessions:
    def __init__(
        self,
        db: Database,
        live: LiveApplications,
        *,
        max_message_chars: int,
        max_text_answer_chars: int,
    ) -> None:
        self._db = db
        self._write_gate = WriteGate(db)
        self._live = live
        self._max_message_chars = max_message_chars
        self._max_text_answer_chars = max_text_answer_chars

    # -- reading -------------------------------------------------------------------------
    def assignments(self, user: SignedInUser) -> list[TesterAssignment]:
        return [_view(row) for row in store.of_user(self._db, user.id)]

    def assignment(self, user: SignedInUser, token: str) -> TesterAssignment:
        return _view(self._assignment_row(user, token))

    def pack(self, assignment: TesterAssignment) -> ScenarioPack:
        return resolve_pack(assignment.scenario)

    def questionnaire_items(self, assignment: TesterAssignment) -> list[QuestionnaireItem]:
        questionnaires = self.pack(assignment).questionnaires
        if assignment.level is Level.RED_TEAMING:
            return list(questionnaires.red_teaming)
        return list(questionnaires.field_testing)

    def chat(self, user: SignedInUser, token: str) -> ChatView:
        with transaction(self._db) as tx:
            row = _own(tx, user, token)
            _require_status(row, Status.IN_SESSION)
            assert row.session_id is not None  # set together with IN_SESSION
            return ChatView(
                _view(row),
                [_chat_turn(turn) for turn in turns(tx, row.session_id)],
                evaluation_settings(tx, row.evaluation_id).max_turns,
            )

    # -- the session ---------------------------------------------------------------------
    async def start(self, user: SignedInUser, token: str, *, consent: bool) -> None:
        """Record consent and open the session. Starting twice is harmless."""
        if not consent:
            raise InputError(
                "please confirm that you have read the instructions and agree to take part",
                {"consent": "required"},
            )
        row = await anyio.to_thread.run_sync(self._assignment_row, user, token)
        if row.status != Status.ASSIGNED:
            return
        version = await self._live.version(row.application_id)
        await anyio.to_thread.run_sync(self._open_session, user, row.id, version)

    def _assignment_row(self, user: SignedInUser, token: str) -> AssignmentRecord:
        with transaction(self._db) as tx:
            return _own(tx, user, token)

    def _open_session(self, user: SignedInUser, assignment_id: int, version: str | None) -> None:
        def human_session(row: AssignmentRecord, application: str) -> NewSession:
            pack = resolve_pack(row.scenario)
            briefing = row.briefing
            provenance = Provenance(
                application=application,
                application_version=version,
                scenario=pack.name,
                scenario_version=pack.version,
                template=briefing.persona if briefing else None,
                template_version=briefing.template_version if briefing else None,
                parameters=briefing.parameters if briefing else {},
                brief=SessionBrief(goal=briefing.goal if briefing else None),
            )
            return NewSession(
                id=uuid.uuid4().hex,
                run_id=human_run_id(row.evaluation_id),
                work_key=f"assignment-{row.id}",
                application_id=row.application_id,
                scenario=row.scenario,
                level=Level(row.level),
                source=SessionSource.HUMAN,
                provenance=provenance,
                persona=briefing.text if briefing else None,
                tester_id=user.id,
            )

        store.start_session(
            self._db,
            assignment_id,
            claim=(Status.ASSIGNED, Status.IN_SESSION),
            session=human_session,
        )

    async def send(
        self, user: SignedInUser, token: str, text: str, *, expected_index: int | None
    ) -> ChatTurn:
        """Send one message and store the turn as soon as it completes.

        ``expected_index`` is the turn the page was about to add: a form submitted twice
        gets the turn the first submission stored instead of a duplicate.
        """
        text = text.strip()
        if not text:
            raise InputError("type a message before sending", {"message": "empty"})
        if len(text) > self._max_message_chars:
            raise InputError(
                f"messages are limited to {self._max_message_chars} characters; "
                f"this one has {len(text)}",
                {"message": "too long"},
            )
        # Turns of one session are taken one at a time (double clicks, two open tabs).
        async with self._live.session_lock(token):
            state = await anyio.to_thread.run_sync(self._turn_state, user, token, expected_index)
            index = state.turns
            if expected_index is not None and expected_index != index:
                return _resubmitted(state.earlier, text)
            if index >= state.max_turns:
                raise MessageLimitReached(
                    f"this session has reached its limit of {state.max_turns} messages; "
                    "please end it"
                )
            exchange = await self._live.exchange(
                state.session_id,
                state.application_id,
                text,
                index=index,
                history=partial(self._answered_turns, state.session_id) if index else None,
                toolbox=Toolbox.of(resolve_pack(state.scenario)),
            )
            reply = exchange.reply
            error = reply.error
            if error is None and reply.text is None:
                error = "the application returned no text"
            meta: JsonObject = {}
            if exchange.restarted:
                meta[RESTARTED] = True
            elif exchange.resumed:
                meta[RESUMED] = True
            await anyio.to_thread.run_sync(
                self._store_turn,
                state.session_id,
                reply.turn(
                    index,
                    text,
                    error=error,
                    latency_ms=exchange.latency_ms,
                    meta=meta,
                    created_at=utcnow(),
                ),
            )
        # The tester sees what was stored: a lone surrogate cannot even be sent as JSON.
        return ChatTurn(
            index=index,
            user_text=storable_text(text),
            reply=storable_text(reply.text) if reply.ok and reply.text is not None else None,
            restarted=exchange.restarted,
        )

    def _answered_turns(self, session_id: str) -> list[tuple[str, str]]:
        """The session's turns the application answered: the context a replay rebuilds."""
        with transaction(self._db) as tx:
            return [
                (turn.user_text, turn.reply)
                for turn in turns(tx, session_id)
                if turn.reply is not None
            ]

    def _turn_state(self, user: SignedInUser, token: str, expected_index: int | None) -> _TurnState:
        """What sending a turn needs, read in one transaction (this is the hot path)."""
        with transaction(self._db) as tx:
            row = _own(tx, user, token)
            _require_status(row, Status.IN_SESSION)
            assert row.session_id is not None  # set together with IN_SESSION
            count = turn_count(tx, row.session_id)
            earlier = None
            if expected_index is not None and expected_index < count:
                found = turn_at(tx, row.session_id, expected_index)
                if found is not None:
                    earlier = ChatTurn(found.index, found.user_text, found.reply)
            return _TurnState(
                session_id=row.session_id,
                application_id=row.application_id,
                scenario=row.scenario,
                turns=count,
                max_turns=evaluation_settings(tx, row.evaluation_id).max_turns,
                earlier=earlier,
            )

    def _store_turn(self, session_id: str, turn: TurnRecord) -> None:
        try:
            with self._write_gate():
                store_turn(self._db, session_id, turn)
        except Duplicate:
            # Another server process stored this turn index first.
            raise Conflict("the conversation moved on in another window; reload it") from None

    async def end(self, user: SignedInUser, token: str) -> None:
        """End the session (a second click is harmless) and release the live dialogue."""
        row = await anyio.to_thread.run_sync(self._assignment_row, user, token)
        if row.session_id is None:
            _require_status(row, Status.IN_SESSION)
        assert row.session_id is not None
        async with self._live.session_lock(token):
            ended = await anyio.to_thread.run_sync(self._end, user, token)
        if ended:
            self._live.drop_lock(token)
            await self._live.end(row.session_id)

    def _end(self, user: SignedInUser, token: str) -> bool:
        with transaction(self._db) as tx:
            row = _own(tx, user, token)
            if row.status in (Status.QUESTIONNAIRE, Status.DONE):
                return False  # ended already (a second click)
            _require_status(row, Status.IN_SESSION)
            assert row.session_id is not None
            if not turn_count(tx, row.session_id):
                raise Conflict("send at least one message before ending the session")
            store.end_session(tx, row.id, row.session_id, Status.QUESTIONNAIRE)
            return True

    # -- the questionnaire ---------------------------------------------------------------
    def submit_questionnaire(self, user: SignedInUser, token: str, form: Mapping[str, str]) -> None:
        """Validate every answer, then store all of them and finish the assignment at once."""
        assignment = self.assignment(user, token)
        if assignment.status == Status.DONE:
            raise Conflict("this questionnaire has already been submitted; thank you")
        items = self.questionnaire_items(assignment)
        values = parse_questionnaire(items, form, max_text_chars=self._max_text_answer_chars)
        pack = self.pack(assignment)
        provenance = {
            "scenario": pack.name,
            "scenario_version": pack.version,
            "level": assignment.level.value,
        }

        def answers(session_id: str) -> list[NewQuestionnaireAnswer]:
            return [
                _answer(session_id, respondent_of(user), item_id, value, provenance)
                for item_id, value in values.items()
            ]

        finished = store.finish(
            self._db, token, user.id, claim=(Status.QUESTIONNAIRE, Status.DONE), answers=answers
        )
        if not finished:
            raise Conflict("this questionnaire has already been submitted; thank you")


def _answer(
    session_id: str,
    respondent: str,
    item_id: str,
    value: QuestionnaireValue,
    provenance: JsonObject,
) -> NewQuestionnaireAnswer:
    return NewQuestionnaireAnswer(
        session_id=session_id,
        item_id=item_id,
        respondent=respondent,
        simulated=False,
        value=value if isinstance(value, float) else None,
        text=value if isinstance(value, str) else None,
        provenance=provenance,
    )


def _own(tx: Transaction, user: SignedInUser, token: str) -> AssignmentRecord:
    row = store.by_token(tx, token)
    if row is None:
        raise NotFound("there is no such session")
    if row.user_id != user.id:
        raise Forbidden("this session belongs to someone else")
    return row


def _view(row: AssignmentRecord) -> TesterAssignment:
    return TesterAssignment(
        token=row.token,
        position=row.position,
        scenario=row.scenario,
        scenario_title=resolve_pack(row.scenario).title,
        level=Level(row.level),
        status=row.status,
        briefing=row.briefing.text if row.briefing else None,
    )


_STATUS_PROBLEMS = {
    Status.ASSIGNED: "this session has not started yet",
    Status.IN_SESSION: "this session is still running",
    Status.QUESTIONNAIRE: "this session has ended; the questionnaire is next",
    Status.DONE: "this session is finished",
}


def _require_status(row: AssignmentRecord, status: str) -> None:
    if row.status != status:
        raise Conflict(_STATUS_PROBLEMS.get(row.status, "this session cannot do that now"))


def _chat_turn(turn: DialogueTurn) -> ChatTurn:
    return ChatTurn(turn.index, turn.user_text, turn.reply, bool(turn.meta.get(RESTARTED)))


def _resubmitted(earlier: ChatTurn | None, text: str) -> ChatTurn:
    if earlier is not None and earlier.user_text == text:
        return earlier
    raise Conflict("the conversation moved on in another window; reload it")
