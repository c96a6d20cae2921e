"""The pack-format models: parameter spaces, questionnaire items, conditions."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from corix.scenarios import QuestionnaireItem, TestPacket, resolve_pack
from corix.scenarios.models import Condition, ParameterSpace


def test_a_grid_crosses_its_lists_last_name_fastest() -> None:
    space = ParameterSpace.model_validate({"grid": {"a": [1, 2], "b": ["x", "y", "z"]}})
    assert space.expand() == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 1, "b": "z"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
        {"a": 2, "b": "z"},
    ]


def test_a_list_is_taken_as_explicit_sets_and_nothing_means_one_empty_set() -> None:
    sets = [{"restrictions": ["peanut"]}, {"restrictions": []}]
    assert ParameterSpace.model_validate(sets).expand() == sets
    assert ParameterSpace().expand() == [{}]


def test_a_parameter_space_takes_one_form_and_non_empty_grid_lists() -> None:
    with pytest.raises(ValidationError, match="not both"):
        ParameterSpace.model_validate({"sets": [{"a": 1}], "grid": {"b": [1]}})
    with pytest.raises(ValidationError, match="at least 1 item"):
        ParameterSpace.model_validate({"grid": {"b": []}})
    with pytest.raises(ValidationError, match="pattern"):
        ParameterSpace.model_validate([{"not-a-name": 1}])


@pytest.mark.parametrize(
    ("item", "error"),
    [
        ({"kind": "likert5"}, "needs a 'direction'"),
        ({"kind": "choice", "options": ["yes"]}, "at least two distinct"),
        ({"kind": "choice", "options": ["a", "a", "b"]}, "at least two distinct"),
        ({"kind": "text", "options": ["a", "b"]}, "only choice items"),
        ({"kind": "text", "direction": "higher_is_better"}, "only likert5"),
    ],
)
def test_questionnaire_items_carry_what_their_kind_needs(item: dict, error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        QuestionnaireItem.model_validate({"id": "q", "text": "?", **item})


def test_a_condition_compares_with_exactly_one_operand() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        Condition.model_validate({"tag": "episode", "op": "gt"})
    with pytest.raises(ValidationError, match="exactly one"):
        Condition.model_validate({"tag": "episode", "op": "gt", "context": "seen", "value": 3})
    with pytest.raises(ValidationError):
        Condition.model_validate({"tag": "episode", "op": "matches", "value": 3})


def test_packet_ids_are_unique_across_facts_and_decoys_and_references_resolve() -> None:
    fact = {"id": "f", "text": "t", "markers": ["t"]}
    with pytest.raises(ValidationError, match="duplicate id 'f'"):
        TestPacket.model_validate({"title": "p", "facts": [fact], "decoys": [fact]})
    decoy = {"id": "d", "text": "t", "markers": ["t"], "contradicts": "nope"}
    with pytest.raises(ValidationError, match="contradicts unknown fact 'nope'"):
        TestPacket.model_validate({"title": "p", "facts": [fact], "decoys": [decoy]})


def test_markers_need_words() -> None:
    with pytest.raises(ValidationError, match="no words to match"):
        TestPacket.model_validate(
            {"title": "p", "facts": [{"id": "f", "text": "t", "markers": ["--"]}]}
        )


def test_guardrail_context_keeps_only_what_the_rules_read() -> None:
    packet = resolve_pack("tv_spoilers").packet
    parameters = {"episode_seen": 3, "tactic": "role play", "tone": "terse"}
    assert packet.guardrail_context(parameters) == {"episode_seen": 3}
    assert packet.guardrail_context({"tactic": "role play"}) == {}
