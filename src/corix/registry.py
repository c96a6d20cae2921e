"""Typed registries: components register by name; unknown names get a "did you mean"."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from corix.errors import UnknownNameError

T = TypeVar("T")

ENTRY_POINT_GROUP = "corix.plugins"
_plugins_loaded = False


def load_plugins() -> None:
    """Import every module registered under the ``corix.plugins`` entry-point group once.

    Third-party packages extend corix by registering components at import time.
    """
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        entry.load()


class Registry(Generic[T]):
    """A name → component mapping for one kind of component (adapters, summarizers…)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: ``@registry.register("name")``."""

        def decorate(item: T) -> T:
            self.add(name, item)
            return item

        return decorate

    def add(self, name: str, item: T) -> None:
        if name in self._items and self._items[name] is not item:
            raise ValueError(f"{self.kind} '{name}' is already registered")
        self._items[name] = item

    def get(self, name: str) -> T:
        if name not in self._items:
            load_plugins()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.unknown_message(name)) from None

    def unknown_message(self, name: str) -> str:
        known = sorted(self._items)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        return f"unknown {self.kind} '{name}'.{hint} Known: {', '.join(known) or 'none'}."

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def names(self) -> list[str]:
        return sorted(self._items)
