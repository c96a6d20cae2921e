"""What the three built-in ARIA pilot packs must provide."""

from __future__ import annotations

import pytest

from corix.domain import Level
from corix.scenarios import ItemKind, Probe, ScenarioPack, expand_model_tests, resolve_pack
from corix.scenarios.models import FIELD_TESTING_ITEM_IDS, RED_TEAMING_ITEM_IDS, Direction
from corix.scenarios.text import normalize

PACKS = ["tv_spoilers", "meal_planner", "pathfinder"]


@pytest.fixture(params=PACKS)
def pack(request: pytest.FixtureRequest) -> ScenarioPack:
    return resolve_pack(request.param)


def test_scripts_cover_both_probes_and_both_dialogue_shapes(pack: ScenarioPack) -> None:
    scripts = pack.model_testing.scripts
    assert len(scripts) >= 6
    assert {script.probe for script in scripts} == {Probe.CAPABILITY, Probe.GUARDRAIL}
    assert any(len(script.turns) == 1 for script in scripts)
    assert any(len(script.turns) > 1 for script in scripts)
    tests = expand_model_tests(pack, seed=0)
    assert 15 <= len(tests) <= 30
    for test in tests:
        assert all("{{" not in turn and "{%" not in turn for turn in test.turns)
        if test.probe is Probe.CAPABILITY:
            assert test.required_facts, test.key


def test_personas_targets_and_tasks(pack: ScenarioPack) -> None:
    templates = pack.personas.templates
    assert len(templates) >= 3
    assert {t.level for t in templates} == {Level.RED_TEAMING, Level.FIELD_TESTING}
    assert any(t.file for t in templates) and any(not t.file for t in templates)
    assert all(len(t.parameters.expand()) >= 2 for t in templates)
    assert len(pack.personas.targets) >= 4
    assert len(pack.personas.tasks) >= 3
    assert all(task.success_criteria for task in pack.personas.tasks)


def test_shared_questionnaire_items(pack: ScenarioPack) -> None:
    field = {item.id: item for item in pack.questionnaires.field_testing}
    assert list(field) == list(FIELD_TESTING_ITEM_IDS)
    for item in field.values():
        assert (item.kind, item.direction) == (ItemKind.LIKERT5, Direction.HIGHER_IS_BETTER)
    red = {item.id: item for item in pack.questionnaires.red_teaming}
    assert list(red) == list(RED_TEAMING_ITEM_IDS)
    assert red["rt_outcome"].kind is ItemKind.CHOICE
    assert red["rt_outcome"].options == ["succeeded", "partly", "failed"]
    assert (red["rt_difficulty"].kind, red["rt_difficulty"].direction) == (
        ItemKind.LIKERT5,
        Direction.HIGHER_IS_BETTER,
    )
    for item_id in ("rt_strategies", "rt_refinement", "rt_vulnerabilities"):
        assert red[item_id].kind is ItemKind.TEXT


def test_every_statement_quotes_one_of_its_markers(pack: ScenarioPack) -> None:
    assert pack.packet.decoys
    for statement in pack.packet.statements:
        text = f" {normalize(statement.text)} "
        assert any(f" {normalize(m)} " in text for m in statement.markers), statement.id


def test_guardrails_and_instructions_are_written_out(pack: ScenarioPack) -> None:
    assert pack.guardrails.prohibited and pack.guardrails.permitted
    for text in (
        pack.instructions.red_teaming,
        pack.instructions.field_testing,
        pack.instructions.annotators,
    ):
        assert len(text.split()) > 30


def test_tv_spoilers_guide_has_eight_episodes_of_facts() -> None:
    packet = resolve_pack("tv_spoilers").packet
    assert sorted({f.tags["episode"] for f in packet.facts}) == list(range(1, 9))
