"""The context window: asked of the server, learned from a refusal, and what judges make of it."""

from __future__ import annotations

import pytest
from annotator_support import CLEAN, SPOILER, Dialogue, view_of

from corix.assessment import builtin_harm_packs
from corix.assessment.annotators import LLMAnnotator, LLMHarmAnnotator, category_schema
from corix.assessment.schema import load_builtin_schema
from corix.llm import (
    EndpointConfig,
    LLMClient,
    ScriptedTransport,
    TransportError,
    estimate_messages_tokens,
    reply_tokens,
    usable_context,
    window_in_refusal,
)
from corix.llm.mock_server import MockServerConfig, running_mock_server
from support.mock_serving import mock_stats

PACK = builtin_harm_packs()["groundedness"]


def test_the_window_is_read_from_the_refusals_servers_give() -> None:
    openai = "This model's maximum context length is 4096 tokens. However, you requested 4140"
    assert window_in_refusal(openai) == 4096
    assert window_in_refusal("Requested tokens (5000) exceed context window of 2048") == 2048
    llama = "the request exceeds the available context size (8192 tokens)"
    assert window_in_refusal(llama) == 8192
    assert window_in_refusal("injected server error") is None


@pytest.mark.parametrize("llama_cpp", [False, True])
async def test_the_server_says_its_window_and_llama_cpp_gets_cache_prompt(llama_cpp: bool) -> None:
    config = MockServerConfig(context_window=3000, llama_cpp_props=llama_cpp)
    async with running_mock_server(config) as base_url:
        endpoint = EndpointConfig(name="s", base_url=base_url, model="corix-mock")
        async with LLMClient(endpoint) as client:
            assert await client.known_context_window() == 3000
            result = await LLMHarmAnnotator(client, {"groundedness": PACK}).annotate(
                view_of(SPOILER), "harm:groundedness", seed=1
            )
        stats = await mock_stats(base_url)
    assert result.ok
    assert stats["cache_prompt"] == (stats["requests"] if llama_cpp else 0)


@pytest.mark.parametrize(("window", "compact"), [(4096, True), (32768, False)])
async def test_compact_guidelines_are_chosen_when_the_window_is_small(
    window: int, compact: bool
) -> None:
    endpoint = EndpointConfig(name="m", transport="mock", model="m", context_window=window)
    transport = ScriptedTransport()
    async with LLMClient(endpoint, transport=transport) as client:
        result = await LLMHarmAnnotator(client, {"groundedness": PACK}).annotate(
            view_of(CLEAN), "harm:groundedness", seed=1
        )
    suffix = "prompt-2-compact" if compact else "prompt-2"
    assert result.ok and result.provenance.guideline_version == f"groundedness-1.0/{suffix}"
    assert ("Worked examples:" in transport.requests[0].messages[1].content) is not compact


async def test_an_overflow_refusal_is_remembered_and_the_prompt_refitted() -> None:
    refusal = TransportError.from_status(
        400, "This model's maximum context length is 3000 tokens. However, you requested 3300"
    )
    endpoint = EndpointConfig(name="m", transport="mock", model="m")
    transport = ScriptedTransport(failures=[refusal])
    async with LLMClient(endpoint, transport=transport) as client:
        annotator = LLMHarmAnnotator(client, {"groundedness": PACK})
        result = await annotator.annotate(view_of(SPOILER), "harm:groundedness", seed=1)
        assert client.context_window == 3000
    first, second = transport.requests
    assert estimate_messages_tokens(first.messages) > estimate_messages_tokens(second.messages)
    # Refitted to the window it learned: the compact guidelines, and room for the reply.
    assert estimate_messages_tokens(second.messages) + (second.max_tokens or 0) <= usable_context(
        3000
    )
    assert result.ok and result.provenance.guideline_version.endswith("-compact")


async def test_a_turn_level_category_over_three_turns_fits_a_small_window() -> None:
    """Twelve per-turn reasons at the full bound left a 4,096 window no room for the
    dialogue; the compact form bounds them shorter, so the reply and the dialogue fit."""
    schema = load_builtin_schema()
    category = schema.category("content_characterization")
    reply = "The assistant names the episode and what happens in it, as the packet says. " * 3
    dialogue = Dialogue(
        scenario="tv_spoilers",
        parameters={"episode_seen": 3},
        turns=[(f"What happens in episode {i}? Tell me more.", reply) for i in (1, 2, 3)],
    )
    endpoint = EndpointConfig(name="m", transport="mock", model="m", context_window=4096)
    transport = ScriptedTransport()
    async with LLMClient(endpoint, transport=transport) as client:
        result = await LLMAnnotator(client, schema).annotate(view_of(dialogue), category.id, seed=1)
    assert result.ok, result.error
    assert result.provenance.guideline_version.endswith("-compact")
    sent = transport.requests[0]
    asked = sent.response_format["json_schema"]["schema"]  # type: ignore[index]
    turn = asked["properties"]["turns"]["properties"]["turn_2"]["properties"]
    assert turn["cc_relevant"]["properties"]["reasoning"]["maxLength"] == 100
    assert sent.max_tokens == reply_tokens(category_schema(category, 3, compact=True))
    assert sent.max_tokens < reply_tokens(category_schema(category, 3))
    fitted = estimate_messages_tokens(sent.messages) + sent.max_tokens
    assert fitted <= usable_context(4096)
