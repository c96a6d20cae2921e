"""Loading packs: built-in ones by name, user packs by path, and errors naming file/field/line."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from corix.errors import ConfigError, UnknownNameError
from corix.scenarios import ScenarioPack, list_builtin_packs, load_pack, resolve_pack, validate_pack
from corix.scenarios.loader import builtin_pack_dir


def line_of(text: str, fragment: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if fragment in line:
            return number
    raise AssertionError(f"{fragment!r} not in text")


def test_builtin_packs_are_listed_and_resolve_by_name() -> None:
    assert list_builtin_packs() == ["meal_planner", "pathfinder", "tv_spoilers"]
    for name in list_builtin_packs():
        pack = resolve_pack(name)
        assert isinstance(pack, ScenarioPack)
        assert pack.name == name
        assert pack.root == builtin_pack_dir() / name
    assert resolve_pack("tv_spoilers") is resolve_pack("tv_spoilers")  # loaded once


def test_builtin_packs_have_no_warnings() -> None:
    for name in list_builtin_packs():
        assert validate_pack(builtin_pack_dir() / name) == []


def test_unknown_pack_name_suggests_the_closest(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'tv_spoilers'"):
        resolve_pack("tv_spoiler")


def test_a_user_pack_loads_from_its_folder_or_its_manifest(write_pack) -> None:
    root = write_pack()
    by_folder = resolve_pack(str(root))
    by_file = load_pack(root / "pack.yaml")
    assert by_folder.name == by_file.name == "mini"
    assert by_folder.packet.facts[0].id == "c1_storm"
    assert "Goal: {{ target.description }}" in by_folder.personas.templates[0].text


def test_a_missing_folder_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no scenario pack here"):
        load_pack(tmp_path / "nowhere")


def test_malformed_yaml_names_file_and_line(write_pack, mini_pack: str) -> None:
    broken = mini_pack.replace("title: Mini", "title: [Mini")
    root = write_pack(pack=broken)
    with pytest.raises(ConfigError) as caught:
        load_pack(root)
    assert caught.value.path == str(root / "pack.yaml")
    assert caught.value.line is not None
    assert "not valid YAML" in str(caught.value)


def test_missing_field_names_file_field_and_line(write_pack, mini_pack: str) -> None:
    without_permitted = mini_pack.replace(
        "  permitted: [Discussing chapters the reader has read.]\n", ""
    )
    root = write_pack(pack=without_permitted)
    with pytest.raises(ConfigError) as caught:
        load_pack(root)
    assert caught.value.field == "guardrails.permitted"
    # The line where the `guardrails` mapping that lacks the field begins.
    assert caught.value.line == line_of(without_permitted, "prohibited: [Revealing")
    assert caught.value.path == str(root / "pack.yaml")


def test_misspelt_field_is_rejected_with_its_line(write_pack, mini_pack: str) -> None:
    misspelt = mini_pack.replace("format: 1\n", "format: 1\nkeywrds: [book]\n")
    root = write_pack(pack=misspelt)
    with pytest.raises(
        ConfigError, match="unknown field 'keywrds'; did you mean 'keywords'"
    ) as caught:
        load_pack(root)
    assert caught.value.field == "keywrds"
    assert caught.value.line == line_of(misspelt, "keywrds:")


def test_packet_errors_name_the_packet_file(write_pack, mini_packet: str) -> None:
    duplicated = mini_packet.replace("id: c2_letter", "id: c1_storm")
    root = write_pack(packet=duplicated)
    with pytest.raises(ConfigError, match="duplicate id 'c1_storm'") as caught:
        load_pack(root)
    assert caught.value.path == str(root / "packet.yaml")


def test_undeclared_variable_in_a_turn_names_template_variable_and_line(
    write_pack, mini_pack: str
) -> None:
    typo = mini_pack.replace("What happens in chapter {{ chapter }}?", "Chapter {{ chaptr }}?")
    root = write_pack(pack=typo)
    with pytest.raises(ConfigError) as caught:
        load_pack(root)
    message = str(caught.value)
    assert "script 'recap' turn 1" in message
    assert "'chaptr'" in message
    assert "did you mean 'chapter'" in message
    assert caught.value.field == "model_testing.scripts.0.turns.0"
    assert caught.value.line == line_of(typo, "{{ chaptr }}")


def test_a_variable_missing_from_one_parameter_set_is_caught(write_pack, mini_pack: str) -> None:
    partial = mini_pack.replace("- {chapter_read: 2, chapter: 2}", "- {chapter_read: 2}")
    root = write_pack(pack=partial)
    with pytest.raises(ConfigError, match="parameter set 1 does not define"):
        load_pack(root)


def test_undeclared_variable_in_a_persona_file_names_the_file_and_its_line(write_pack) -> None:
    persona = "You have read {{ chapter_read }} chapters.\nYou like {{ genre }}.\n"
    root = write_pack(persona=persona)
    with pytest.raises(ConfigError) as caught:
        load_pack(root)
    assert caught.value.path == str(root / "reader.j2")
    assert caught.value.line == 2
    assert "persona template 'reader'" in str(caught.value)
    assert "'genre'" in str(caught.value)


def test_persona_templates_may_use_their_goal_but_not_the_other_levels(
    write_pack, mini_pack: str
) -> None:
    # A field-testing persona gets `task`; `target` belongs to red teaming.
    wrong_goal = mini_pack.replace("{{ task.description }}", "{{ target.description }}")
    root = write_pack(pack=wrong_goal)
    with pytest.raises(ConfigError, match="'target'"):
        load_pack(root)


def test_template_syntax_errors_are_config_errors(write_pack, mini_pack: str) -> None:
    broken = mini_pack.replace("How does it end?", "How does it {% end?")
    root = write_pack(pack=broken)
    with pytest.raises(ConfigError, match="template syntax error") as caught:
        load_pack(root)
    assert caught.value.field == "model_testing.scripts.1.turns.1"


def test_unknown_fact_in_a_selector_suggests_the_closest(write_pack, mini_pack: str) -> None:
    typo = mini_pack.replace(
        "required_facts: {ids: [c1_storm]}", "required_facts: {ids: [c1_strom]}"
    )
    root = write_pack(pack=typo)
    with pytest.raises(ConfigError, match=r"unknown fact 'c1_strom'.*did you mean 'c1_storm'") as e:
        load_pack(root)
    assert e.value.field == "personas.tasks.0.required_facts.ids"


def test_a_condition_reading_an_undefined_parameter_is_caught(write_pack, mini_pack: str) -> None:
    typo = mini_pack.replace("op: eq, context: chapter}", "op: eq, context: chap}")
    root = write_pack(pack=typo)
    with pytest.raises(ConfigError, match="reads parameter 'chap'") as caught:
        load_pack(root)
    assert caught.value.field == "model_testing.scripts.0.required_facts.where.0"


def test_missing_persona_file_names_the_field(write_pack, mini_pack: str) -> None:
    root = write_pack(pack=mini_pack.replace("file: reader.j2", "file: nobody.j2"))
    with pytest.raises(ConfigError, match=r"cannot read template file 'nobody\.j2'") as caught:
        load_pack(root)
    assert caught.value.field == "personas.templates.0.file"
    assert caught.value.line == line_of(mini_pack, "file: reader.j2")


def test_pack_files_must_stay_inside_the_pack(write_pack, mini_pack: str) -> None:
    escaping = mini_pack.replace("file: reader.j2", "file: ../reader.j2")
    with pytest.raises(ConfigError, match="relative to the pack folder") as caught:
        load_pack(write_pack(pack=escaping))
    assert caught.value.field == "personas.templates.0.file"


def test_validate_pack_reports_likely_mistakes(
    write_pack, mini_pack: str, mini_packet: str
) -> None:
    pack = mini_pack.replace(
        "    - {id: q_trust, text: Trust, kind: likert5, direction: higher_is_better}\n", ""
    ).replace("- {chapter_read: 2}\n", "- {chapter_read: 2, mood: calm}\n")
    packet = mini_packet.replace(
        "markers: [letter in the flour]", "markers: [storm wrecks the mill]"
    )
    warnings = validate_pack(write_pack(pack=pack, packet=packet))
    assert any("lacks the shared items q_trust" in w for w in warnings)
    assert any("'c2_letter': its text contains none of its markers" in w for w in warnings)
    assert any(
        "marker 'storm wrecks the mill' is shared by c1_storm, c2_letter" in w for w in warnings
    )
    assert any("persona 'student' never uses parameter 'mood'" in w for w in warnings)
    assert len(warnings) == 4


@pytest.mark.parametrize(
    "template",
    [
        "{{ ''.__class__.__mro__ }}",
        "{% if false %}{{ cycler.__init__.__globals__ }}{% endif %}",  # a branch never taken
        "{{ task['__class__'] }}",
    ],
)
def test_validate_refuses_a_template_that_reaches_python_internals(
    write_pack, template: str
) -> None:
    root = write_pack(persona=template)
    with pytest.raises(ConfigError, match="may not reach Python internals") as caught:
        validate_pack(root)
    assert caught.value.path is not None and caught.value.path.endswith("reader.j2")


def test_validate_renders_templates_in_the_sandbox(write_pack) -> None:
    root = write_pack(persona="{{ range(10 ** 9) | list | length }}")
    with pytest.raises(ConfigError, match="'safe_range' was given 1,000,000,000: over the limit"):
        validate_pack(root)


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("{{ 'x' * 10**9 }}", "a repetition makes a value over 1,000,000 characters"),
        (
            "{% for i in range(10**5) %}{% for j in range(10**5) %}{% endfor %}{% endfor %}",
            "loops went past 200,000 steps",
        ),
        ("{% macro m(n) %}{{ m(n) }}{% endmacro %}{{ m(1) }}", "calls itself without end"),
    ],
)
def test_validate_refuses_a_compute_bomb_quickly(write_pack, template: str, reason: str) -> None:
    # `{{ 'x' * 10**9 }}` took 4 GB and 152 s to validate before templates had bounds.
    started = time.monotonic()
    with pytest.raises(ConfigError, match=reason) as caught:
        validate_pack(write_pack(persona=template))
    assert time.monotonic() - started < 5
    assert caught.value.path is not None and caught.value.path.endswith("reader.j2")
