from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from corix.config import load_yaml_model, parse_yaml_model
from corix.errors import ConfigError


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
