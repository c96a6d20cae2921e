from pathlib import Path

import pytest

from corix import registry
from corix.apps.specs import ADAPTERS
from corix.errors import UnknownNameError
from corix.registry import Registry


def test_register_and_get() -> None:
    registry: Registry[int] = Registry("number")
    registry.add("one", 1)
    assert registry.get("one") == 1
    assert "one" in registry and registry.names() == ["one"]


def test_unknown_name_suggests_the_closest_and_lists_known() -> None:
    registry: Registry[int] = Registry("summarizer")
    registry.add("median", 1)
    registry.add("maximum", 2)
    with pytest.raises(UnknownNameError) as info:
        registry.get("medain")
    message = str(info.value)
    assert "Did you mean 'median'?" in message
    assert "Known: maximum, median." in message


def test_registering_another_item_under_a_taken_name_fails() -> None:
    registry: Registry[int] = Registry("number")
    registry.add("one", 1)
    with pytest.raises(ValueError, match="already registered"):
        registry.add("one", 2)


def test_plugins_register_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A third-party package, installed as a real distribution on sys.path, adds a component."""
    (tmp_path / "corix_plugin_example.py").write_text(
        "from corix.apps.specs import ADAPTERS\nADAPTERS.add('example', lambda spec: None)\n",
        encoding="utf-8",
    )
    dist_info = tmp_path / "corix_plugin_example-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: corix-plugin-example\nVersion: 1.0\n", encoding="utf-8"
    )
    (dist_info / "entry_points.txt").write_text(
        "[corix.plugins]\nexample = corix_plugin_example\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    monkeypatch.setattr(ADAPTERS, "_items", dict(ADAPTERS._items))  # restored afterwards
    assert "example" not in ADAPTERS
    assert ADAPTERS.get("example") is not None  # loaded on the first unknown name
    assert "example" in ADAPTERS.names()
