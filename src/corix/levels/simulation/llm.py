"""The LLM engine: a model, called through corix's client layer, plays the persona.

The model sees the persona brief (and, for a red teamer, an attack strategy) in its system
prompt, and the application's replies as delimited data. It writes each next message and
ends the dialogue with ``[DONE]`` or ``[GIVE UP]``; the brief alone sets how it writes. The
application sees only the messages. A message that breaks character is not sent: the model
is told why and asked again, at most ``max_reasks`` times, after which the session ends with
``SIMULATOR_ERROR`` — unless the plan allows a scripted fallback (``fallback: scripted``),
in which case the scripted engine writes that one message, marked ``fallback: scripted``
on the turn. The same bound applies to its questionnaire answers; a questionnaire reply cut
at its token limit is first asked again once, unchanged, with room for any reply the
answer schema allows (:func:`~corix.llm.most_reply_tokens`). Small models often
copy the application's reply: the copied sentences are cut when what is left is a message
of its own (counted in the turn's meta as ``copied_sentences_cut``), else the model is asked
again with a shorter, stricter instruction and an example (:data:`prompts.COPY_REASK`).

A message asks for the endpoint's ``max_tokens`` (else :data:`MAX_MESSAGE_TOKENS`). When
the endpoint declares a ``context_window``, the prompt (and the reply it asks for) is
fitted to it by one rule: the system prompt and the opening stay, and the oldest exchanges
(a message of the simulated user and the reply it got) are left out until the rest fits;
how many messages were left out is stored with the turn (``context_cut``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from corix.domain import EndReason, JsonObject, ModelUsage, TurnRecord
from corix.levels.recorder import TurnMeta
from corix.levels.simulation import prompts
from corix.levels.simulation.character import (
    COPIES_REPLY,
    break_character,
    strip_copied,
    strip_protocol_tags,
)
from corix.levels.simulation.engine import Move, Say, SimulatedUser, SimulationSpec, Stop
from corix.levels.simulation.phrasing import TalkingPoints
from corix.levels.simulation.progress import TurnOutcome
from corix.levels.simulation.questionnaire import (
    AnswerProblems,
    QuestionnaireValue,
    questionnaire_schema,
    read_answers,
    response_format,
)
from corix.levels.simulation.strategies import STRATEGIES
from corix.llm import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    LLMClient,
    ModelCallError,
    estimate_messages_tokens,
    most_reply_tokens,
    reply_tokens,
    usable_context,
)
from corix.scenarios import QuestionnaireItem

logger = logging.getLogger(__name__)

DEFAULT_MAX_REASKS = 2
MAX_MESSAGE_TOKENS = 1024
"""The longest message asked for when the endpoint sets no ``max_tokens``."""
_KEPT_HEAD = 2
"""The system prompt and the opening request are never left out."""


class LLMUser:
    """A model-played simulated user for one session (see the module docstring)."""

    respondent = "simulated:llm"

    def __init__(
        self,
        client: LLMClient,
        spec: SimulationSpec,
        points: TalkingPoints,
        *,
        seed: int,
        temperature: float | None = None,
        max_reasks: int = DEFAULT_MAX_REASKS,
        fallback: SimulatedUser | None = None,
    ) -> None:
        self._client = client
        self._fallback = fallback
        self._persona = spec.persona.text
        self._goal = (spec.persona.goal_description, *spec.persona.success_criteria)
        self._seed = seed
        self._temperature = temperature
        self._max_reasks = max_reasks
        self._max_tokens = client.endpoint.max_tokens or MAX_MESSAGE_TOKENS
        self._last_left_out = 0
        self._copied_cut = 0
        self._meta: TurnMeta = {"engine": "llm"}
        self._usage = ModelUsage()
        strategy = STRATEGIES.get(spec.strategies[0]) if spec.strategies else None
        if strategy is not None:
            self._meta["strategy"] = strategy.name
        system = prompts.system_prompt(
            spec.persona.text,
            strategy=strategy,
            example=strategy.example(points) if strategy is not None else "",
        )
        self._history = [
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=prompts.OPENING),
        ]

    @property
    def model(self) -> str:
        return self._client.endpoint.model

    @property
    def usage(self) -> ModelUsage:
        return self._usage

    async def next_move(self, last_turn: TurnRecord | None, outcome: TurnOutcome | None) -> Move:
        if last_turn is not None:
            note = (
                prompts.APP_FAILED
                if last_turn.failed
                else prompts.reply_block(last_turn.response_text or "")
            )
            self._history.append(ChatMessage(role="user", content=note))
        problems: list[str] = []
        stripped_tags = 0
        retry: list[ChatMessage] = []
        last_reply = None if last_turn is None or last_turn.failed else last_turn.response_text
        for _ in range(self._max_reasks + 1):
            try:
                reply = await self._chat(self._history + retry)
            except ModelCallError as exc:
                return Stop(EndReason.SIMULATOR_ERROR, str(exc))
            text, control = prompts.split_control(reply.text)
            problem = None
            if control is not None and last_turn is None:
                problem = prompts.NOT_STARTED
            elif control is prompts.Control.DONE:
                return Stop(EndReason.GOAL_REACHED, "the simulated user said its goal was reached")
            elif control is prompts.Control.GIVE_UP:
                return Stop(EndReason.GAVE_UP, "the simulated user gave up")
            else:
                # corix's own tags copied into the message are repaired, not re-asked.
                text, removed = strip_protocol_tags(text)
                stripped_tags += removed
                problem = break_character(
                    text, self._persona, allowed=self._goal, last_reply=last_reply
                )
                if problem == COPIES_REPLY and last_reply is not None:
                    text, problem = self._repair_copy(text, last_reply)
            if problem is None:
                self._history.append(ChatMessage(role="assistant", content=text))
                repairs: TurnMeta = {"reasks": len(problems), "problems": problems}
                if stripped_tags:
                    repairs["stripped_tags"] = stripped_tags
                if self._copied_cut:
                    repairs["copied_sentences_cut"] = self._copied_cut
                    self._copied_cut = 0
                if self._last_left_out:
                    repairs["context_cut"] = {"messages_left_out": self._last_left_out}
                return Say(text, {**self._meta, **repairs})
            problems.append(problem)
            reask = (
                prompts.COPY_REASK
                if problem == COPIES_REPLY
                else prompts.REASK.format(problem=problem)
            )
            retry = [
                ChatMessage(role="assistant", content=reply.text),
                ChatMessage(role="user", content=reask),
            ]
        if self._fallback is not None:
            return await self._fall_back(last_turn, outcome, problems)
        return Stop(
            EndReason.SIMULATOR_ERROR,
            f"{len(problems)} unusable messages from the simulator: {'; '.join(problems)}",
        )

    async def _fall_back(
        self, last_turn: TurnRecord | None, outcome: TurnOutcome | None, problems: list[str]
    ) -> Move:
        """The scripted engine's move for this turn only, marked as such on the turn."""
        assert self._fallback is not None
        move = await self._fallback.next_move(last_turn, outcome)
        if isinstance(move, Say):
            self._history.append(ChatMessage(role="assistant", content=move.text))
            meta: TurnMeta = {**self._meta, "fallback": "scripted", "problems": problems}
            return Say(move.text, meta)
        return move

    async def answer_questionnaire(
        self, items: Sequence[QuestionnaireItem], end_reason: EndReason
    ) -> dict[str, QuestionnaireValue]:
        """In character, as JSON; an empty dict if no usable answer came within the bound."""
        if not items:
            return {}
        messages = [
            *self._history,
            ChatMessage(role="user", content=prompts.questionnaire_prompt(items)),
        ]
        schema = questionnaire_schema(items)
        limit = reply_tokens(schema)
        enlarged = False
        retry: list[ChatMessage] = []
        attempts = 0
        last: AnswerProblems | None = None
        while attempts <= self._max_reasks:
            try:
                reply = await self._chat(
                    messages + retry, response_format=response_format(items), max_tokens=limit
                )
            except ModelCallError as exc:
                logger.warning("simulated questionnaire not answered: %s", exc)
                return {}
            try:
                return read_answers(items, reply.text)
            except AnswerProblems as problems:
                last = problems
                if reply.finish_reason == "length" and not enlarged:
                    # Cut, not wrong: asked again once, unchanged, with room for any reply.
                    enlarged, limit = True, max(2 * limit, most_reply_tokens(schema))
                    continue
                attempts += 1
                retry = [
                    ChatMessage(role="assistant", content=reply.text),
                    ChatMessage(
                        role="user",
                        content=prompts.QUESTIONNAIRE_REASK.format(problems=problems),
                    ),
                ]
        logger.warning(
            "simulated questionnaire not answered: no usable reply within the bound (%s)", last
        )
        return {}

    def _repair_copy(self, text: str, last_reply: str) -> tuple[str, str | None]:
        """``text`` with the sentences copying ``last_reply`` cut, and why it still cannot
        be sent (``None``: it can); the cut is counted for the turn's meta."""
        rest, cut = strip_copied(text, last_reply)
        if not rest:
            return text, COPIES_REPLY
        problem = break_character(rest, self._persona, allowed=self._goal, last_reply=last_reply)
        if problem is None:
            self._copied_cut += cut
        return rest, problem

    def _left_out(self, messages: Sequence[ChatMessage], max_tokens: int) -> int:
        """How many messages fitting ``messages`` and a reply of ``max_tokens`` to the
        context window leaves out."""
        window = self._client.endpoint.context_window
        if window is None:
            return 0
        budget = usable_context(window) - max_tokens
        sizes = [estimate_messages_tokens([message]) for message in messages]
        total, left_out = sum(sizes), 0
        # Exchanges go in pairs, so user and assistant messages still alternate.
        while total > budget and len(messages) - left_out > _KEPT_HEAD + 2:
            oldest = _KEPT_HEAD + left_out
            total -= sizes[oldest] + sizes[oldest + 1]
            left_out += 2
        return left_out

    def _fitted(self, messages: list[ChatMessage], max_tokens: int) -> list[ChatMessage]:
        self._last_left_out = self._left_out(messages, max_tokens)
        return [*messages[:_KEPT_HEAD], *messages[_KEPT_HEAD + self._last_left_out :]]

    async def _chat(
        self,
        messages: list[ChatMessage],
        *,
        response_format: JsonObject | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        max_tokens = max_tokens or self._max_tokens
        response = await self._client.chat(
            ChatRequest(
                messages=self._fitted(messages, max_tokens),
                temperature=self._temperature,
                max_tokens=max_tokens,
                seed=self._seed,
                response_format=response_format,
            )
        )
        if not response.cached:  # a reply from the cache cost nothing
            self._usage = ModelUsage(
                calls=self._usage.calls + 1,
                prompt_tokens=self._usage.prompt_tokens + response.prompt_tokens,
                completion_tokens=self._usage.completion_tokens + response.completion_tokens,
            )
        return response
