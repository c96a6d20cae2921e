"""LLM annotators through the real client path: structured output, re-asks, failed passes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from annotator_support import CLEAN, Dialogue, view_of

from corix.assessment import builtin_harm_packs
from corix.assessment.annotators import LLMAnnotator, LLMHarmAnnotator, harm_schema
from corix.assessment.annotators.structured import ReplyProblems, extract_json
from corix.assessment.schema import AnnotationSchema
from corix.llm import (
    EndpointConfig,
    LLMClient,
    MockModel,
    ScriptedTransport,
    TransportError,
    reply_tokens,
)
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.llm.transport import RawCompletion
from support.mock_serving import mock_stats

MOCK = EndpointConfig(name="test", transport="mock", model="corix-mock")


def _client(
    *replies: str, failures: list[TransportError] | None = None
) -> tuple[LLMClient, ScriptedTransport]:
    transport = ScriptedTransport(
        MockModel(list(replies)) if replies else None, failures=failures or []
    )
    return LLMClient(MOCK, transport=transport), transport


def _answer(value: Any, reasoning: str = "turn 0 shows it") -> dict[str, Any]:
    return {"reasoning": reasoning, "value": value}


def _risk(released: str, withheld: str, **follow_ups: Any) -> str:
    payload = {
        "ra_prohibited_released": _answer(released),
        "ra_permitted_withheld": _answer(withheld),
        "ra_user_induced": _answer(follow_ups.get("induced")),
        "ra_risk_type": _answer(follow_ups.get("risk_type")),
        "ra_outcome": _answer(follow_ups.get("outcome")),
    }
    return json.dumps(payload)


def test_json_is_found_around_fences_and_text() -> None:
    assert extract_json('Here you go:\n```json\n{"a": {"b": 1}}\n```\nDone.') == {"a": {"b": 1}}
    assert extract_json('{broken then {"ok": true}') == {"ok": True}
    with pytest.raises(ReplyProblems, match="no JSON object"):
        extract_json("[1, 2, 3]")


def test_raw_line_breaks_inside_a_string_are_read() -> None:
    # llama-cpp-python's grammar for a JSON string admits them; SmolLM2 writes them.
    reply = '{"reasoning": "It names the episode\n\n", "severity": 3}'
    assert "\n" in reply and "\\n" not in reply
    assert extract_json(reply) == {"reasoning": "It names the episode\n\n", "severity": 3}


async def test_mock_model_answers_a_harm_with_full_provenance() -> None:
    transport = ScriptedTransport()
    pack = builtin_harm_packs()["groundedness"]
    async with LLMClient(MOCK, transport=transport) as client:
        annotator = LLMHarmAnnotator(client, {"groundedness": pack}, temperature=0.7)
        result = await annotator.annotate(view_of(CLEAN), "harm:groundedness", seed=41)
    assert result.ok
    (severity,) = result.answers
    assert isinstance(severity.value, float) and pack.scale.contains(severity.value)
    assert severity.reasoning  # the model's reasoning is kept
    provenance = result.provenance
    assert (provenance.annotator, provenance.model, provenance.seed) == (
        "llm:corix-mock",
        "corix-mock",
        41,
    )
    assert provenance.guideline_version == "groundedness-1.0/prompt-2"
    assert provenance.details is not None and provenance.details.attempts == 1
    (request,) = transport.requests
    assert (request.seed, request.temperature) == (41, 0.7)
    assert request.response_format == {
        "type": "json_schema",
        "json_schema": {"name": "groundedness", "strict": True, "schema": harm_schema(pack)},
    }


async def test_a_fenced_reply_with_chatter_is_read(schema: AnnotationSchema) -> None:
    client, _ = _client("Sure! Here is my annotation:\n```json\n" + _risk("no", "no") + "\n```")
    result = await LLMAnnotator(client, schema).annotate(view_of(CLEAN), "risk_assessment", seed=1)
    assert result.ok
    assert [(a.question_id, a.value, a.reasoning) for a in result.answers] == [
        ("ra_prohibited_released", "no", "turn 0 shows it"),
        ("ra_permitted_withheld", "no", "turn 0 shows it"),
    ]


async def test_an_invalid_answer_is_sent_back_with_what_was_wrong(
    schema: AnnotationSchema,
) -> None:
    invalid = _risk("yes", "no", induced="yes", risk_type="weather", outcome="negative")
    client, transport = _client(
        invalid, _risk("yes", "no", induced="yes", risk_type="data_privacy", outcome="negative")
    )
    result = await LLMAnnotator(client, schema).annotate(view_of(CLEAN), "risk_assessment", seed=1)
    assert result.provenance.details is not None
    assert result.ok and result.provenance.details.attempts == 2
    values = {a.question_id: a.value for a in result.answers}
    assert values["ra_risk_type"] == "data_privacy"
    reask = transport.requests[1].messages
    assert reask[-2].role == "assistant" and reask[-2].content == invalid
    assert reask[-1].role == "user"
    assert "ra_risk_type: " in reask[-1].content and "weather" in reask[-1].content
    assert transport.requests[1].seed == transport.requests[0].seed


async def test_answers_to_follow_ups_the_gating_hides_are_dropped_and_recorded(
    schema: AnnotationSchema,
) -> None:
    # Nothing released or withheld, yet the follow-ups are answered: more than was asked.
    client, transport = _client(_risk("no", "no", induced="yes", risk_type="data_privacy"))
    result = await LLMAnnotator(client, schema).annotate(view_of(CLEAN), "risk_assessment", seed=1)
    assert result.ok and len(transport.requests) == 1
    assert {a.question_id for a in result.answers} == {
        "ra_prohibited_released",
        "ra_permitted_withheld",
    }
    assert result.provenance.details is not None
    assert result.provenance.details.dropped_hidden == ("ra_risk_type", "ra_user_induced")


async def test_a_cut_reply_is_asked_again_once_with_twice_the_limit(
    schema: AnnotationSchema,
) -> None:
    pack = builtin_harm_packs()["groundedness"]
    whole = json.dumps({"reasoning": "r", "severity": 2})
    replies = iter([('{"reasoning": "rambling on and o', "length"), (whole, "stop")])

    class Cutting(ScriptedTransport):
        async def send(self, request: Any, endpoint: Any, timeout: float) -> Any:
            self.requests.append(request)
            text, finish = next(replies)
            return RawCompletion(text, "m", 10, request.max_tokens, finish_reason=finish)

    transport = Cutting()
    async with LLMClient(MOCK, transport=transport) as client:
        result = await LLMHarmAnnotator(client, {"groundedness": pack}).annotate(
            view_of(CLEAN), "harm:groundedness", seed=1
        )
    first, second = (r.max_tokens for r in transport.requests)
    # Sized from the schema (a bounded reasoning and a severity), then doubled, unchanged.
    assert first == reply_tokens(harm_schema(pack)) and second == 2 * first
    assert transport.requests[0].messages == transport.requests[1].messages
    assert result.ok and result.answers[0].value == 2.0
    assert result.provenance.details is not None and result.provenance.details.max_tokens == second


async def test_answers_that_never_fit_make_a_failed_pass(schema: AnnotationSchema) -> None:
    client, transport = _client("no idea", "still not JSON", '{"ra_outcome": 3}')
    annotator = LLMAnnotator(client, schema, max_reasks=2)
    result = await annotator.annotate(view_of(CLEAN), "risk_assessment", seed=1)
    assert not result.ok and result.answers == ()
    assert result.error is not None and result.error.startswith(
        "no valid answer after 3 attempt(s)"
    )
    assert "ra_prohibited_released: required, missing" in result.error
    assert result.provenance.details is not None
    assert result.provenance.details.last_reply == '{"ra_outcome": 3}'
    assert len(transport.requests) == 3


async def test_a_failed_model_call_makes_a_failed_pass(schema: AnnotationSchema) -> None:
    refused = TransportError("HTTP 400: bad request", retryable=False, status=400)
    client, _ = _client(failures=[refused])
    result = await LLMAnnotator(client, schema).annotate(view_of(CLEAN), "risk_assessment", seed=1)
    assert not result.ok
    assert result.error is not None and "failed after 1 attempt(s): HTTP 400" in result.error


async def test_turn_level_answers_are_read_per_turn(schema: AnnotationSchema) -> None:
    dialogue = Dialogue(
        scenario="tv_spoilers", parameters={"episode_seen": 3}, turns=[("a?", "b"), ("c?", "d")]
    )
    per_turn = {
        "is_confident_tone": _answer(7),
        "is_over_familiar": _answer("no"),
        "is_tone_clash": _answer("no"),
    }
    only_first = json.dumps({"turns": {"turn_0": per_turn}})
    both = json.dumps(
        {"turns": {"turn_0": per_turn, "turn_1": {**per_turn, "is_confident_tone": 3}}}
    )
    client, transport = _client(only_first, both)
    result = await LLMAnnotator(client, schema).annotate(
        view_of(dialogue), "interaction_style", seed=1
    )
    assert result.ok
    assert {(a.question_id, a.turn_index): a.value for a in result.answers} == {
        ("is_confident_tone", 0): 7.0,
        ("is_confident_tone", 1): 3.0,
        ("is_over_familiar", 0): "no",
        ("is_over_familiar", 1): "no",
        ("is_tone_clash", 0): "no",
        ("is_tone_clash", 1): "no",
    }
    assert (
        "is_confident_tone (turn 1): required, missing"
        in transport.requests[1].messages[-1].content
    )


async def test_a_severity_off_the_scale_is_reasked() -> None:
    pack = builtin_harm_packs()["groundedness"]
    client, transport = _client(
        '{"reasoning": "bad", "severity": 9}',
        '{"reasoning": "one claim unsupported", "severity": "3"}',
    )
    result = await LLMHarmAnnotator(client, {"groundedness": pack}).annotate(
        view_of(CLEAN), "harm:groundedness", seed=1
    )
    assert result.ok and result.answers[0].value == 3.0
    assert (
        "severity: 9 is not a whole number from 1 to 5"
        in transport.requests[1].messages[-1].content
    )


async def test_malformed_http_answers_end_in_a_failed_pass(schema: AnnotationSchema) -> None:
    async with running_mock_server(MockServerConfig(fail_malformed=1.0)) as base_url:
        endpoint = EndpointConfig(
            name="http", base_url=base_url, model="corix-mock", max_retries=1, backoff_base_s=0
        )
        async with LLMClient(endpoint) as client:
            result = await LLMAnnotator(client, schema).annotate(
                view_of(CLEAN), "risk_assessment", seed=1
            )
    assert not result.ok
    assert result.error is not None and "failed after 2 attempt(s)" in result.error


async def test_over_http_mock_answers_to_hidden_follow_ups_are_dropped(
    schema: AnnotationSchema,
) -> None:
    # The mock model fills every field of the schema, so when it says "no violation" it
    # also answers the hidden follow-ups: dropped and recorded, never a re-ask.
    async with running_mock_server() as base_url:
        endpoint = EndpointConfig(name="http", base_url=base_url, model="corix-mock")
        async with LLMClient(endpoint) as client:
            annotator = LLMAnnotator(client, schema, max_reasks=2)
            results = [
                await annotator.annotate(view_of(CLEAN), "risk_assessment", seed=seed)
                for seed in range(12)
            ]
        stats = await mock_stats(base_url)
    details = [r.provenance.details for r in results if r.provenance.details]
    assert all(r.ok for r in results) and stats["requests"] == 12
    assert [d.attempts for d in details] == [1] * 12
    assert any(d.dropped_hidden for d in details)
