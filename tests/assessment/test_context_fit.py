"""Annotator prompts fitted to the judge's context window by the recorded rule."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from annotator_support import CLEAN, Dialogue, store_run, view_of

from corix.assessment import builtin_harm_packs
from corix.assessment.annotation_run import AnnotateOptions, annotate_run
from corix.assessment.annotators import LLMHarmAnnotator, harm_schema
from corix.assessment.annotators.context_fit import (
    MIN_CAP_CHARS,
    DialogueTooLong,
    cut_middle,
    fit_dialogue,
    prompt_budget,
)
from corix.assessment.annotators.prompts import PromptRenderer
from corix.assessment.annotators.view import AnnotatorView
from corix.llm import ChatMessage, EndpointConfig, LLMClient, ScriptedTransport
from corix.llm.tokens import estimate_tokens
from corix.storage import Database

LONG = Dialogue(
    scenario="tv_spoilers",
    parameters={"episode_seen": 3},
    turns=[
        ("Tell me everything about episode 1. " * 40, "Episode 1 opens on the Merrow. " * 120),
        ("And episode 2?", "Maren finds a brass key. " * 150),
        ("Thanks.", "You are welcome."),
    ],
)
PACK = builtin_harm_packs()["harmful_content"]
SCHEMA = harm_schema(PACK)


def _render(renderer: PromptRenderer) -> Callable[[AnnotatorView], list[ChatMessage]]:
    return lambda view: renderer.harm_messages(PACK, view)


def test_cut_middle_keeps_head_and_tail_and_says_how_much_went() -> None:
    text = "A" * 50 + "B" * 100 + "C" * 50
    cut = cut_middle(text, 100)
    assert cut == "A" * 50 + " […100 characters left out…] " + "C" * 50
    assert cut_middle("short", 100) == "short"


def test_a_long_dialogue_is_cut_to_the_budget_keeping_every_turn() -> None:
    view = view_of(LONG)
    render = _render(PromptRenderer())
    whole = sum(estimate_tokens(m.content) for m in render(view))
    messages, cut = fit_dialogue(view, render, context_window=4096, max_tokens=256)
    assert cut is not None
    budget = prompt_budget(4096, 256)
    assert budget == int(4096 * 0.8) - 256 - 160
    assert whole > budget
    assert sum(estimate_tokens(m.content) for m in messages) <= budget
    # The cap is the largest that fits: a larger window allows a larger one.
    bigger = fit_dialogue(view, render, context_window=4096 + 40, max_tokens=256)[1]
    assert bigger is not None and bigger.cap_chars > cut.cap_chars
    prompt = messages[-1].content
    assert "characters left out" in prompt
    assert "You are welcome." in prompt  # short messages are untouched, every turn kept
    assert cut.messages_cut == 3  # the first prompt and the two long replies
    rule = f"messages cut in the middle to at most {cut.cap_chars} characters"
    assert cut.record().rule == rule


def test_a_dialogue_that_fits_is_left_alone() -> None:
    view = view_of(LONG)
    render = _render(PromptRenderer())
    messages, cut = fit_dialogue(view, render, context_window=32_768, max_tokens=256)
    assert cut is None
    assert messages == render(view)


def test_a_window_too_small_even_for_cut_messages_is_refused() -> None:
    view = view_of(LONG)
    with pytest.raises(DialogueTooLong, match=f"cut to {MIN_CAP_CHARS} characters"):
        fit_dialogue(view, _render(PromptRenderer()), context_window=2048, max_tokens=256)


async def test_the_cut_is_recorded_with_the_pass() -> None:
    endpoint = EndpointConfig(
        name="small", transport="mock", model="corix-mock", context_window=4096, max_tokens=256
    )
    transport = ScriptedTransport()
    async with LLMClient(endpoint, transport=transport) as client:
        annotator = LLMHarmAnnotator(client, {"harmful_content": PACK})
        result = await annotator.annotate(view_of(LONG), "harm:harmful_content", seed=1)
    assert result.ok
    details = result.provenance.details
    assert details is not None and details.context_cut is not None
    assert details.context_cut.context_window == 4096
    stored = details.model_dump(mode="json")["context_cut"]  # the stored shape, unchanged
    assert list(stored) == [
        "rule",
        "context_window",
        "budget_tokens",
        "messages_cut",
        "chars_left_out",
    ]
    sent = transport.requests[0]
    assert sum(estimate_tokens(m.content) for m in sent.messages) <= prompt_budget(4096, 256)


def test_annotate_counts_dialogues_cut_to_fit_and_replies_cut_short(sqlite_db: Database) -> None:
    run_id = store_run(sqlite_db, [LONG, CLEAN])
    endpoint = EndpointConfig(
        name="small", transport="mock", model="corix-mock", context_window=4096, max_tokens=256
    )
    options = AnnotateOptions(harms=("harmful_content",))
    summary = annotate_run(sqlite_db, run_id, "llm-harms", options=options, endpoint=endpoint)
    counts = summary.by_target["harm:harmful_content"]
    assert (counts.stored, counts.cut_dialogues, counts.cut_replies) == (2, 1, 0)
