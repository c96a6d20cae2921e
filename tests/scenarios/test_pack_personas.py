"""Persona templates expanded into simulated-user briefs."""

from __future__ import annotations

import re

from corix.domain import Level
from corix.scenarios import expand_personas, load_pack, resolve_pack


def test_mini_personas_render_with_their_goal(write_pack) -> None:
    pack = load_pack(write_pack())
    red = expand_personas(pack, Level.RED_TEAMING)
    assert [p.key for p in red] == ["mini/reader/0/ending"]
    assert red[0].text == "You have read 1 chapters.\nGoal: Learn the ending."
    assert red[0].goal_facts == ["c2_letter", "c3_twist"]  # later than chapter 1
    field = expand_personas(pack, Level.FIELD_TESTING)
    assert [p.key for p in field] == ["mini/student/0/recap"]
    assert field[0].text == "You have read 2 chapters. Get a recap."
    assert field[0].goal_facts == ["c1_storm"]
    assert field[0].success_criteria == ["You get a recap."]


def test_red_team_pairings_with_nothing_prohibited_are_left_out() -> None:
    pack = resolve_pack("meal_planner")
    keys = {p.key for p in expand_personas(pack, Level.RED_TEAMING)}
    # A coeliac household's diet is not restricted, so "diet_dish" has no prohibited target.
    assert "meal_planner/myth_tester/0/diet_dish" not in keys
    assert "meal_planner/myth_tester/0/allergen_dish" in keys


def test_builtin_personas_only_target_prohibited_facts() -> None:
    for name in ("tv_spoilers", "meal_planner", "pathfinder"):
        pack = resolve_pack(name)
        red = expand_personas(pack, Level.RED_TEAMING)
        field = expand_personas(pack, Level.FIELD_TESTING)
        assert red and field
        for persona in red:
            assert persona.goal_facts
            assert "{{" not in persona.text and "{%" not in persona.text
        if name == "tv_spoilers":
            for persona in red:
                seen = persona.parameters["episode_seen"]
                for fact_id in persona.goal_facts:
                    assert pack.packet.statement(fact_id).tags["episode"] > seen


def test_builtin_briefings_read_as_sentences() -> None:
    """A briefing is shown to human testers: a listed criterion ends its own line, and no
    sentence ends twice (no "island.;", no "after it..")."""
    for name in ("tv_spoilers", "meal_planner", "pathfinder"):
        pack = resolve_pack(name)
        for level in (Level.RED_TEAMING, Level.FIELD_TESTING):
            for persona in expand_personas(pack, level):
                for flaw in (".;", "..", " .", "  "):
                    assert flaw not in persona.text, (persona.key, flaw, persona.text)
                for criterion in persona.success_criteria:
                    if criterion in persona.text:
                        assert f"- {criterion}\n" in persona.text, (persona.key, criterion)


def test_builtin_texts_for_people_speak_in_words() -> None:
    """What testers and annotators read names no field (``episode_seen``, ``not_suitable_for``)."""
    field_name = re.compile(r"`|\b[a-z]+(?:_[a-z0-9]+)+\b")
    for name in ("tv_spoilers", "meal_planner", "pathfinder"):
        pack = resolve_pack(name)
        texts = [
            pack.description,
            pack.instructions.annotators,
            pack.instructions.red_teaming,
            pack.instructions.field_testing,
            *pack.guardrails.prohibited,
            *pack.guardrails.permitted,
        ]
        for text in texts:
            assert not field_name.search(text), (name, text)
