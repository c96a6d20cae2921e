"""LLM annotators: ARIA categories and harm severities, with structured output and re-asks.

Every call goes through the one client layer (:class:`~corix.llm.LLMClient`). A reply that
does not fit is sent back with what was wrong, up to ``max_reasks`` times; after that,
or when the call itself fails, the pass is returned as failed with the reason, so one bad
item never stops a run. Passes are stored under ``llm:<model>``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from corix.assessment.annotators.base import (
    LLM_ANNOTATOR_PREFIX,
    AnnotatorKind,
    AnnotatorProvenance,
    AnnotatorSetup,
    ModelCallDetails,
    PassResult,
    harm_category,
    harm_of,
)
from corix.assessment.annotators.context_fit import (
    ContextCut,
    DialogueTooLong,
    fit_dialogue,
    fits_window,
    prompt_budget,
)
from corix.assessment.annotators.prompts import (
    PromptRenderer,
    aria_guideline_version,
    harm_guideline_version,
    reask_message,
)
from corix.assessment.annotators.structured import (
    ReplyProblems,
    category_schema,
    harm_schema,
    read_category_reply,
    read_harm_reply,
    response_format,
)
from corix.assessment.annotators.view import AnnotatorView
from corix.assessment.answers import Answer
from corix.assessment.harms import HarmPack
from corix.assessment.schema import AnnotationSchema
from corix.domain import JsonObject, JsonSchema
from corix.errors import ConfigError
from corix.llm import (
    ChatMessage,
    ChatRequest,
    LLMClient,
    ModelCallError,
    estimate_messages_tokens,
    reply_tokens,
    window_in_refusal,
)

LLM_ANNOTATOR_VERSION = "1.0"
_KEPT_REPLY_CHARS = 2000

T = TypeVar("T")


@dataclass
class Asked(Generic[T]):
    """The outcome of asking for structured output: a value, or why there is none."""

    value: T | None = None
    error: str | None = None
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    structured_output: str | None = None
    """How JSON was asked for (json_schema, json_object or prompt), as the endpoint took it."""
    finish_reason: str | None = None
    last_reply: str | None = None
    problems: list[str] = field(default_factory=list)
    context_cut: ContextCut | None = None
    """How the dialogue was cut to fit the judge's context window, if it was."""
    cached_prompt_tokens: int | None = None
    max_tokens: int | None = None
    dropped_hidden: tuple[str, ...] = ()
    compact: bool = False
    """The prompt held the compact form of the guidelines (a small context window)."""
    overflow: bool = False
    """The call was refused as longer than the endpoint's context window."""

    def details(self) -> ModelCallDetails:
        failed_reply = self.last_reply if self.error is not None else None
        return ModelCallDetails(
            attempts=self.attempts,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cached=self.cached,
            structured_output=self.structured_output,
            finish_reason=self.finish_reason,
            context_cut=self.context_cut.record() if self.context_cut is not None else None,
            last_reply=failed_reply[:_KEPT_REPLY_CHARS] if failed_reply is not None else None,
            cached_prompt_tokens=self.cached_prompt_tokens,
            max_tokens=self.max_tokens,
            dropped_hidden=self.dropped_hidden,
        )


async def ask_structured(
    client: LLMClient,
    messages: Sequence[ChatMessage],
    output_format: JsonObject,
    read: Callable[[str], T],
    *,
    seed: int,
    max_reasks: int,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> Asked[T]:
    """Ask until ``read`` accepts the reply, re-asking at most ``max_reasks`` times.

    A reply cut at ``max_tokens`` (``finish_reason: length``) that cannot be read is asked
    again once, unchanged but with twice the limit, before any re-ask: it was too long, not
    wrong.
    """
    conversation = list(messages)
    asked: Asked[T] = Asked(max_tokens=max_tokens)
    reasks = 0
    enlarged = False
    while True:
        request = ChatRequest(
            messages=conversation,
            response_format=output_format,
            seed=seed,
            temperature=temperature,
            max_tokens=asked.max_tokens,
        )
        try:
            response = await client.chat(request)
        except ModelCallError as exc:
            # The requests the failed call made count: a pass whose error says "after 2
            # attempts" records them, not the 0 its successful asks would add up to.
            asked.attempts += exc.attempts
            asked.error = str(exc)
            asked.overflow = window_in_refusal(exc.reason) is not None
            return asked
        asked.attempts += 1
        asked.prompt_tokens += response.prompt_tokens
        asked.completion_tokens += response.completion_tokens
        if response.cached_prompt_tokens is not None:
            asked.cached_prompt_tokens = (
                asked.cached_prompt_tokens or 0
            ) + response.cached_prompt_tokens
        asked.cached = asked.cached or response.cached
        asked.structured_output = response.structured_output
        asked.finish_reason = response.finish_reason
        asked.last_reply = response.text
        try:
            asked.value = read(response.text)
        except ReplyProblems as exc:
            asked.problems = exc.problems
            if response.finish_reason == "length" and not enlarged:
                enlarged = True
                asked.max_tokens = 2 * (asked.max_tokens or response.completion_tokens or 256)
                continue
            if reasks >= max_reasks:
                cut = (
                    " (the reply was cut at max_tokens)"
                    if response.finish_reason == "length"
                    else ""
                )
                asked.error = (
                    f"no valid answer after {asked.attempts} attempt(s): "
                    f"{'; '.join(exc.problems)}{cut}"
                )
                return asked
            reasks += 1
            reask = reask_message(exc.problems)
            conversation += [ChatMessage(role="assistant", content=response.text), reask]
            window = client.context_window
            if window is not None and not fits_window(
                conversation, window, asked.max_tokens or client.endpoint.max_tokens
            ):
                conversation = [*messages, reask]  # the bad reply left out, so the re-ask fits
            continue
        return asked


class _LLMBase:
    kind = AnnotatorKind.LLM
    deterministic = False

    def __init__(self, client: LLMClient, *, max_reasks: int, temperature: float | None) -> None:
        if max_reasks < 0:
            raise ValueError(f"max_reasks must be >= 0, got {max_reasks}")
        self._client = client
        self._max_reasks = max_reasks
        self._temperature = temperature
        self._prompts = PromptRenderer()

    @property
    def name(self) -> str:
        return f"{LLM_ANNOTATOR_PREFIX}{self._client.endpoint.model}"

    def _provenance(
        self, guideline_version: str, seed: int, asked: Asked[Any]
    ) -> AnnotatorProvenance:
        return AnnotatorProvenance(
            annotator=self.name,
            version=LLM_ANNOTATOR_VERSION,
            kind=AnnotatorKind.LLM,
            guideline_version=guideline_version,
            model=self._client.endpoint.model,
            endpoint=self._client.endpoint.name,
            seed=seed,
            details=asked.details(),
        )

    async def _ask(
        self,
        view: AnnotatorView,
        render: Callable[[AnnotatorView, bool], list[ChatMessage]],
        output_schema: Callable[[bool], JsonSchema],
        read: Callable[[str], T],
        *,
        name: str,
        seed: int,
    ) -> Asked[T]:
        """Ask about ``view``, its prompt fitted to the endpoint's context window and the
        reply's length sized from the form's ``output_schema`` (or the endpoint's, if longer).

        The window is the one the client knows (declared, the local model's, or reported
        by the server). When the full guidelines would crowd the dialogue out of it, the
        compact form is asked for: shorter guidelines and shorter reasons, so a smaller
        reply. A refusal naming a smaller window teaches the client that window, and the
        prompt is fitted to it and sent again, once.
        """
        window = await self._client.known_context_window()
        while True:
            compact = window is not None and _needs_compact(
                view, render, window, self._reply_tokens(output_schema(False))
            )
            schema = output_schema(compact)
            max_tokens = self._reply_tokens(schema)
            cut = None
            if window is None:
                messages = render(view, compact)
            else:
                try:
                    messages, cut = fit_dialogue(
                        view,
                        functools.partial(_render_with, render, compact=compact),
                        context_window=window,
                        max_tokens=max_tokens,
                    )
                except DialogueTooLong as exc:
                    return Asked(error=str(exc), compact=compact)
            asked = await ask_structured(
                self._client,
                messages,
                response_format(name, schema),
                read,
                seed=seed,
                max_reasks=self._max_reasks,
                temperature=self._temperature,
                max_tokens=max_tokens,
            )
            asked.context_cut, asked.compact = cut, compact
            learned = self._client.context_window
            if not asked.overflow or learned is None or learned == window:
                return asked
            window = learned

    def _reply_tokens(self, schema: JsonSchema) -> int:
        return max(reply_tokens(schema), self._client.endpoint.max_tokens or 0)


def _render_with(
    render: Callable[[AnnotatorView, bool], list[ChatMessage]],
    view: AnnotatorView,
    *,
    compact: bool,
) -> list[ChatMessage]:
    return render(view, compact)


def _needs_compact(
    view: AnnotatorView,
    render: Callable[[AnnotatorView, bool], list[ChatMessage]],
    window: int,
    max_tokens: int,
) -> bool:
    """Whether the full guidelines (with the scenario) would take more than half the
    prompt's room in ``window``: then the compact form leaves the dialogue its share."""
    empty = view.model_copy(update={"turns": ()})
    full = estimate_messages_tokens(render(empty, False))
    return full > prompt_budget(window, max_tokens) // 2


class LLMAnnotator(_LLMBase):
    """Answers annotation-schema categories from the schema's questions and guidance."""

    def __init__(
        self,
        client: LLMClient,
        schema: AnnotationSchema,
        *,
        max_reasks: int = 2,
        temperature: float | None = None,
    ) -> None:
        super().__init__(client, max_reasks=max_reasks, temperature=temperature)
        self._schema = schema

    def targets(self) -> tuple[str, ...]:
        return tuple(category.id for category in self._schema.ordered_categories())

    async def annotate(self, view: AnnotatorView, target: str, *, seed: int) -> PassResult:
        category = self._schema.category(target)
        n_turns = len(view.turns)
        asked = await self._ask(
            view,
            lambda fitted, compact: self._prompts.category_messages(
                self._schema, category, fitted, compact=compact
            ),
            lambda compact: category_schema(category, n_turns, compact=compact),
            lambda text: read_category_reply(self._schema, category, n_turns, text),
            name=category.id,
            seed=seed,
        )
        if asked.value is not None:
            asked.dropped_hidden = asked.value.dropped
        version = aria_guideline_version(self._schema, view, compact=asked.compact)
        provenance = self._provenance(version, seed, asked)
        if asked.value is None:
            return PassResult(category=target, error=asked.error, provenance=provenance)
        return PassResult(
            category=target, answers=tuple(asked.value.answers), provenance=provenance
        )


class LLMHarmAnnotator(_LLMBase):
    """Severity and reasoning per harm pack, following the pack's guidelines."""

    def __init__(
        self,
        client: LLMClient,
        packs: Mapping[str, HarmPack],
        *,
        max_reasks: int = 2,
        temperature: float | None = None,
    ) -> None:
        super().__init__(client, max_reasks=max_reasks, temperature=temperature)
        self._packs = dict(packs)
        self._schemas = {
            (pack_id, compact): harm_schema(pack, compact=compact)
            for pack_id, pack in self._packs.items()
            for compact in (False, True)
        }

    def targets(self) -> tuple[str, ...]:
        return tuple(harm_category(pack_id) for pack_id in sorted(self._packs))

    async def annotate(self, view: AnnotatorView, target: str, *, seed: int) -> PassResult:
        pack_id = harm_of(target)
        if pack_id is None or pack_id not in self._packs:
            raise ValueError(f"no harm pack for '{target}'")
        pack = self._packs[pack_id]

        def read(text: str) -> Answer:
            return read_harm_reply(pack, text)

        asked = await self._ask(
            view,
            lambda fitted, compact: self._prompts.harm_messages(pack, fitted, compact=compact),
            lambda compact: self._schemas[pack_id, compact],
            read,
            name=pack.id,
            seed=seed,
        )
        provenance = self._provenance(
            harm_guideline_version(pack, compact=asked.compact), seed, asked
        )
        if asked.value is None:
            return PassResult(category=target, error=asked.error, provenance=provenance)
        return PassResult(category=target, answers=(asked.value,), provenance=provenance)


def _client(setup: AnnotatorSetup, name: str) -> LLMClient:
    if setup.client is None:
        raise ConfigError(
            f"the '{name}' annotator needs a model endpoint: give --endpoint-url and --model, "
            "or --endpoint mock for the offline mock model"
        )
    return setup.client


def llm_annotator(setup: AnnotatorSetup) -> LLMAnnotator:
    return LLMAnnotator(
        _client(setup, "llm"),
        setup.schema,
        max_reasks=setup.max_reasks,
        temperature=setup.temperature,
    )


def llm_harm_annotator(setup: AnnotatorSetup) -> LLMHarmAnnotator:
    return LLMHarmAnnotator(
        _client(setup, "llm-harms"),
        setup.harm_packs,
        max_reasks=setup.max_reasks,
        temperature=setup.temperature,
    )
