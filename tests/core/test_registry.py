import pytest

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
