"""Expanding model-testing scripts: stable keys, deterministic sampling, rendered turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corix.scenarios import Probe, expand_model_tests, load_pack, resolve_pack, templating
from corix.scenarios.validation import pack_warnings


def test_mini_pack_expands_to_rendered_tests_with_required_facts(write_pack) -> None:
    tests = expand_model_tests(load_pack(write_pack()), seed=0)
    assert [t.key for t in tests] == [
        "mini/recap/0",
        "mini/recap/1",
        "mini/ending/0",
        "mini/ending/1",
    ]
    recap = tests[1]
    assert recap.turns == ["I have read 2 chapters. What happens in chapter 2?"]
    assert recap.parameters == {"chapter_read": 2, "chapter": 2}
    assert recap.required_facts == ["c2_letter"]
    assert recap.probe is Probe.CAPABILITY
    assert (recap.template, recap.template_version) == ("recap", "1")
    ending = tests[3]
    assert ending.turns == ["I have read 2 chapters.", "How does it end?"]
    assert ending.required_facts == []


def test_expansion_is_deterministic_and_keys_are_unique() -> None:
    for name in ("tv_spoilers", "meal_planner", "pathfinder"):
        pack = resolve_pack(name)
        first = expand_model_tests(pack, seed=3)
        assert first == expand_model_tests(pack, seed=3)
        keys = [test.key for test in first]
        assert len(set(keys)) == len(keys)
        assert all(key.startswith(f"{name}/") for key in keys)


def test_sampling_depends_on_the_seed_but_keys_do_not(write_pack, mini_pack: str) -> None:
    sampled = mini_pack.replace(
        "        grid: {chapter_read: [1, 2]}",
        "        grid: {chapter_read: [1, 2, 3], mood: [calm, tense, eager]}\n      sample: 4",
    ).replace("        - How does it end?", "        - I feel {{ mood }}. How does it end?")
    pack = load_pack(write_pack(pack=sampled))
    draws = {}
    for seed in range(6):
        endings = [t for t in expand_model_tests(pack, seed) if t.script == "ending"]
        assert len(endings) == 4
        assert endings == [t for t in expand_model_tests(pack, seed) if t.script == "ending"]
        draws[seed] = tuple(t.index for t in endings)
        for test in endings:  # a key always names the same parameter set
            assert test.key == f"mini/ending/{test.index}"
            assert test.parameters == {
                "chapter_read": [1, 2, 3][test.index // 3],
                "mood": ["calm", "tense", "eager"][test.index % 3],
            }
    assert len(set(draws.values())) > 1


def test_a_resumed_run_maps_keys_to_the_same_tests(tmp_path: Path) -> None:
    # Loading the pack again (as a resumed run would) yields the same key → test mapping.
    pack = resolve_pack("tv_spoilers")
    before = {t.key: t for t in expand_model_tests(pack, seed=11)}
    reloaded = load_pack(pack.root)
    after = {t.key: t for t in expand_model_tests(reloaded, seed=11)}
    assert before == after


def test_each_prompt_is_rendered_once_however_often_the_tests_are_asked_for(
    write_pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Checking the pack renders every turn once; its expansion, the warnings and every
    # planning of a run (preflight counts the work, the run plans it) reuse those texts.
    rendered: list[str] = []
    real = templating.render_bounded

    def counting(template: Any, variables: Any) -> str:
        text = real(template, variables)
        rendered.append(text)
        return text

    monkeypatch.setattr(templating, "render_bounded", counting)
    pack = load_pack(write_pack())
    turns = [text for text in rendered if text.startswith(("I have", "How does"))]
    # recap: 2 parameter sets × 1 turn; ending: 2 sets × 2 turns.
    assert len(turns) == 2 + 4
    before = len(rendered)
    tests = expand_model_tests(pack, seed=0)
    assert expand_model_tests(pack, seed=5) == tests
    assert pack_warnings(pack) == []
    assert len(rendered) == before
    assert tests[1].turns == ["I have read 2 chapters. What happens in chapter 2?"]
    # A copy of the pack (as a stored pack record makes) renders its own.
    copy = pack.model_copy()
    assert expand_model_tests(copy, seed=0) == tests
    assert len(rendered) == before + 6
