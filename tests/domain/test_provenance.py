"""Provenance: typed facts, and provenance stored before they were typed."""

from __future__ import annotations

from corix.domain import Provenance, SessionBrief

OLD_MODEL_TEST = {
    "application": "guide",
    "scenario": "tv_spoilers",
    "template": "recap",
    "parameters": {
        "episode_seen": 3,
        "probe": "permitted",
        "required_facts": ["ep2_brass_key"],
        "system_prompt": "You are a guide.",
    },
    "engine": "script",
}


def test_old_parameters_move_into_the_typed_fields() -> None:
    provenance = Provenance.model_validate(OLD_MODEL_TEST)
    assert provenance.parameters == {"episode_seen": 3}
    assert provenance.brief == SessionBrief(probe="permitted", required_facts=("ep2_brass_key",))
    assert provenance.system_prompt == "You are a guide."
    assert provenance.template == "recap" and provenance.engine == "script"


def test_each_old_goal_key_becomes_the_goal() -> None:
    for key in ("goal", "task", "target"):
        stored = {"application": "a", "scenario": "s", "parameters": {key: "g", "tone": "x"}}
        provenance = Provenance.model_validate(stored)
        assert provenance.brief.goal == "g", key
        assert provenance.parameters == {"tone": "x"}
    simulated = {"application": "a", "scenario": "s", "parameters": {"message_style": "terse"}}
    assert Provenance.model_validate(simulated).brief.message_style == "terse"
    imported = {"application": "a", "scenario": "s", "parameters": {"conversation_id": "q1"}}
    migrated = Provenance.model_validate(imported)
    assert migrated.conversation_id == "q1" and migrated.parameters == {}


def test_a_web_assignment_without_a_goal_stored_none() -> None:
    stored = {"application": "a", "scenario": "s", "parameters": {"goal": None, "tone": "x"}}
    provenance = Provenance.model_validate(stored)
    assert provenance.brief.goal is None and provenance.parameters == {"tone": "x"}


def test_typed_provenance_round_trips_through_its_json() -> None:
    # A template's own parameter may share an old name: with a brief, it stays a parameter.
    provenance = Provenance(
        application="a",
        scenario="s",
        parameters={"tone": "x", "target": "the harbour"},
        brief=SessionBrief(goal="g", required_facts=("f1",), message_style="terse"),
        system_prompt="p",
        conversation_id="q1",
    )
    stored = provenance.model_dump(mode="json")
    assert Provenance.model_validate(stored) == provenance
    assert stored["parameters"] == {"tone": "x", "target": "the harbour"}
