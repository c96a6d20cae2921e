import json
import random
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from corix.errors import CorixError
from corix.llm import ChatMessage, ChatRequest, MockModel
from corix.llm.schema_instance import instance_of, schema_of_response_format


def _request(text: str = "Where is the station?", **params: object) -> ChatRequest:
    return ChatRequest(
        model="m",
        messages=[
            ChatMessage(role="system", content="You are helpful."),
            ChatMessage(role="user", content=text),
        ],
        **params,
    )


def _structured(schema: dict[str, object], seed: int) -> ChatRequest:
    return _request(
        seed=seed,
        response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    )


class Evidence(BaseModel):
    quote: str = Field(min_length=12, max_length=20)
    turn: int = Field(ge=1, le=3)


class Verdict(BaseModel):
    severity: int = Field(ge=0, le=7)
    confidence: float = Field(ge=0.25, le=0.75)
    label: Literal["pass", "fail", "unclear"]
    violated: bool
    evidence: list[Evidence] = Field(min_length=1, max_length=2)
    note: str | None


def test_same_request_gets_the_same_reply_and_the_seed_changes_it() -> None:
    model = MockModel()
    assert model.reply(_request(seed=1)) == MockModel().reply(_request(seed=1))
    assert model.reply(_request(seed=1)) != model.reply(_request(seed=2))


def test_text_reply_names_the_last_user_message() -> None:
    reply = MockModel().reply(_request("Is   the museum\nopen on Monday?"))
    assert reply.startswith("Mock reply ")
    assert reply.endswith("to: Is the museum open on Monday?")


def test_long_prompts_are_shortened_in_the_reply() -> None:
    reply = MockModel().reply(_request("word " * 100))
    assert reply.endswith("…")
    assert len(reply.split(" to: ", 1)[1]) == 80


def test_structured_reply_is_valid_for_a_pydantic_schema_with_refs() -> None:
    schema = Verdict.model_json_schema()
    assert "$defs" in schema  # the nested model is referenced, not inlined
    model = MockModel()
    verdicts = [
        Verdict.model_validate_json(model.reply(_structured(schema, seed))) for seed in range(200)
    ]
    assert {v.label for v in verdicts} == {"pass", "fail", "unclear"}
    assert {v.severity for v in verdicts} == set(range(8))
    assert {v.violated for v in verdicts} == {True, False}
    assert {len(v.evidence) for v in verdicts} == {1, 2}
    # A type list with null prefers a real value.
    assert all(v.note is not None for v in verdicts)


def test_structured_reply_is_deterministic() -> None:
    schema = Verdict.model_json_schema()
    assert MockModel().reply(_structured(schema, 5)) == MockModel().reply(_structured(schema, 5))


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"const": 3}, 3),
        ({"type": "null"}, None),
        ({"enum": ["only"]}, "only"),
        ({"type": "integer", "exclusiveMinimum": 4, "exclusiveMaximum": 6}, 5),
        ({"type": "number", "minimum": 2.5, "maximum": 2.5}, 2.5),
        ({"type": "array", "items": {"const": 1}, "minItems": 3, "maxItems": 3}, [1, 1, 1]),
        ({"allOf": [{"type": "object", "properties": {"a": {"const": "x"}}}]}, {"a": "x"}),
        ({"anyOf": [{"type": "null"}, {"const": 1}]}, 1),
        ({"type": ["null", "integer"], "minimum": 9, "maximum": 9}, 9),
        ({"type": "string", "maxLength": 4}, "mock"),
    ],
)
def test_schema_keywords(schema: dict[str, object], expected: object) -> None:
    assert instance_of(schema, random.Random(0)) == expected


def test_unsupported_schema_is_reported() -> None:
    with pytest.raises(ValueError, match="remote"):
        instance_of({"$ref": "https://example.org/remote.json"}, random.Random(0))
    with pytest.raises(ValueError, match="'date'"):
        instance_of({"type": "date"}, random.Random(0))


def test_json_object_format_gets_a_json_object() -> None:
    reply = MockModel().reply(_request("hello", response_format={"type": "json_object"}))
    assert json.loads(reply)["reply"].endswith("to: hello")


def test_response_format_without_a_schema_has_none() -> None:
    assert schema_of_response_format({"type": "text"}) is None
    assert schema_of_response_format({"type": "json_schema", "json_schema": "bad"}) is None


def test_canned_replies_are_consumed_in_order_then_exhausted() -> None:
    model = MockModel(["first", "second"])
    assert [model.reply(_request()), model.reply(_request())] == ["first", "second"]
    with pytest.raises(CorixError, match="script of 2 replies is exhausted"):
        model.reply(_request())


def test_callable_script_sees_the_request() -> None:
    model = MockModel(lambda request: request.messages[-1].content.upper())
    assert model.reply(_request("shout")) == "SHOUT"


def test_judge_noise_is_the_share_of_seeds_that_leave_the_settled_answer() -> None:
    schema = Verdict.model_json_schema()
    quiet = MockModel(judge_noise=0.0)
    settled = quiet.reply(_structured(schema, seed=0))
    assert {quiet.reply(_structured(schema, seed=s)) for s in range(20)} == {settled}
    noisy = MockModel(judge_noise=0.25)
    replies = [noisy.reply(_structured(schema, seed=s)) for s in range(2000)]
    # A fresh draw matches the settled answer only by chance (4 fields, ~1/200 here).
    assert 0.72 <= replies.count(settled) / len(replies) <= 0.78
    assert all(Verdict.model_validate_json(reply) for reply in replies)
    with pytest.raises(ValueError, match="judge_noise"):
        MockModel(judge_noise=1.5)
