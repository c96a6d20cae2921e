import time
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field

from corix.config import compose_yaml, load_yaml_model, parse_yaml_model
from corix.config.yaml_loader import MAX_DEPTH
from corix.errors import ConfigError, ConfigErrors


class Item(BaseModel):
    name: str
    weight: float = Field(ge=0)


class Doc(BaseModel):
    title: str
    items: list[Item]


def test_valid_document_loads() -> None:
    doc = parse_yaml_model("title: t\nitems:\n  - name: a\n    weight: 1\n", Doc, source="d.yaml")
    assert doc.items[0].weight == 1.0


def test_error_names_file_field_and_line() -> None:
    text = "title: t\nitems:\n  - name: a\n    weight: 1\n  - name: b\n    weight: -2\n"
    with pytest.raises(ConfigError) as info:
        parse_yaml_model(text, Doc, source="d.yaml")
    error = info.value
    assert (error.path, error.field, error.line) == ("d.yaml", "items.1.weight", 6)
    assert str(error).startswith("d.yaml:6, field 'items.1.weight'")


def test_missing_field_points_at_its_parent() -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml_model("title: t\nitems:\n  - weight: 1\n", Doc, source="d.yaml")
    assert info.value.field == "items.0.name"
    assert info.value.line == 3


def test_broken_yaml_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("title: t\nitems: [\n  - oops\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_yaml_model(path, Doc)
    assert info.value.path == str(path)
    assert info.value.line is not None and info.value.line >= 2


def test_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_yaml_model(tmp_path / "missing.yaml", Doc)


def test_empty_value_is_a_validation_error_not_a_crash() -> None:
    with pytest.raises(ConfigError) as info:
        parse_yaml_model("title:\nitems: []\n", Doc, source="d.yaml")
    assert info.value.field == "title"
    assert info.value.line == 1


def test_scalars_keep_their_yaml_types() -> None:
    data = parse_yaml_model(
        "title: '3'\nitems:\n  - {name: yes-no, weight: 2.5}\n", Doc, source="d.yaml"
    )
    assert data.title == "3"
    assert data.items[0].weight == 2.5


class Loose(BaseModel):
    model_config = {"extra": "allow"}


def _alias_bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        refs = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_quickly() -> None:
    # Fully expanded this is 9**9 (387 million) strings; the budget stops it at once.
    started = time.perf_counter()
    with pytest.raises(ConfigError, match="aliases expand to more than") as info:
        parse_yaml_model(_alias_bomb(), Loose, source="bomb.yaml")
    assert time.perf_counter() - started < 2
    assert info.value.path == "bomb.yaml" and info.value.line is not None


def test_ordinary_anchors_still_work() -> None:
    text = "defaults: &d {name: a, weight: 2}\ntitle: t\nitems: [*d, *d, *d]\n"
    doc = parse_yaml_model(text, Doc, source="d.yaml")
    assert [item.weight for item in doc.items] == [2.0, 2.0, 2.0]


def test_a_self_referencing_alias_is_refused() -> None:
    with pytest.raises(ConfigError, match=f"nested deeper than {MAX_DEPTH} levels"):
        parse_yaml_model("title: t\nitems: &loop [*loop]\n", Doc, source="loop.yaml")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 10_000])
def test_deep_nesting_is_refused_with_the_file(depth: int) -> None:
    text = "title: " + "[" * depth + "]" * depth + "\n"
    with pytest.raises(ConfigError, match="nested deeper than") as info:
        parse_yaml_model(text, Doc, source="deep.yaml")
    assert info.value.path == "deep.yaml"


def test_a_non_utf8_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("title: t\nitems: []\n# caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8 text") as info:
        load_yaml_model(path, Doc)
    assert info.value.line == 3


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    items: list[Item]
    settings: dict[str, Item] = {}


class StrictItem(Item):
    model_config = ConfigDict(extra="forbid")


class Nested(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entries: list[StrictItem]


def test_every_problem_is_reported_each_with_its_line() -> None:
    text = "title: t\ntitel: x\nitems:\n  - name: a\n    weight: -1\n  - weight: 2\n"
    with pytest.raises(ConfigErrors) as info:
        parse_yaml_model(text, Strict, source="d.yaml")
    found = [(p.line, p.field) for p in info.value.problems]
    assert found == [(2, "titel"), (5, "items.0.weight"), (6, "items.1.name")]
    assert str(info.value.problems[0]) == (
        "d.yaml:2, field 'titel': unknown field 'titel'; did you mean 'title'?"
    )
    assert (info.value.line, info.value.field) == (2, "titel")  # reads as its first problem


def test_an_unknown_field_deep_inside_gets_its_own_models_names() -> None:
    with pytest.raises(ConfigErrors) as info:
        parse_yaml_model("entries:\n  - name: a\n    wieght: 1\n", Nested, source="n.yaml")
    assert [str(p) for p in info.value.problems] == [
        "n.yaml:2, field 'entries.0.weight': Field required",
        "n.yaml:3, field 'entries.0.wieght': unknown field 'wieght'; did you mean 'weight'?",
    ]


def _nodes(node: yaml.Node) -> list[tuple[object, ...]]:
    found: list[tuple[object, ...]] = [
        (type(node).__name__, node.tag, node.start_mark.line, node.start_mark.column)
    ]
    if isinstance(node, yaml.ScalarNode):
        found.append((node.value,))
    children = node.value if isinstance(node, yaml.SequenceNode) else []
    if isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    for child in children:
        found += _nodes(child)
    return found


def test_composing_gives_the_nodes_and_lines_of_pythons_composer() -> None:
    # corix composes with libyaml when it can; every value and line must be what
    # PyYAML's own composer makes of the same text (aliases, block and flow styles, dates).
    pack = Path(__file__).parents[2] / "src/corix/packs/tv_spoilers/pack.yaml"
    extra = "extra: &a {when: 2026-11-29, n: [1, 'x']}\nagain: *a\nlong: |\n  two\n  lines\n"
    text = pack.read_text(encoding="utf-8") + extra
    fast = compose_yaml(text, source="p.yaml")
    assert fast is not None
    assert _nodes(fast) == _nodes(yaml.compose(text, Loader=yaml.SafeLoader))
