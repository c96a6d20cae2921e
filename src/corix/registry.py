"""Typed registries: corix's own components registered in code, a third party's by entry point.

A :class:`Registry` maps names to components of one kind (adapter kinds, summarizers…);
:mod:`corix.extension_points` lists every registry, what a component must be and where
corix's own come from. The first time a registry is read (looked up, listed, iterated or
asked ``in``), it is filled: first with corix's own, by the module of
:data:`BUILTIN_PLUGINS` it names (a plain import, so a source checkout without installed
metadata works), then, the first time any registry is read, every other distribution's
components, from the ``corix.plugins`` entry-point group. Only the read registry's own
module is imported: a run, which reads no summarizer, never imports the measurement (and
NumPy) for it. Each is a function ``register(plugin: Plugin) -> None``; :func:`load_plugins`
fills every registry at once. corix's own components keep bare names (``mean``, ``demo``);
every other distribution's are namespaced by it (``acme_judges.strict`` from the
distribution ``acme-judges``), so two plugins never collide. Unknown names get a "did you
mean" (:func:`corix.errors.unknown_name`).
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from corix.errors import CorixError, UnknownNameError, unknown_name

__all__ = [
    "BUILTIN_PLUGINS",
    "ENTRY_POINT_GROUP",
    "HOME_DISTRIBUTION",
    "Plugin",
    "Registry",
    "load_plugins",
    "namespace_of",
    "refresh_plugins",
]

T = TypeVar("T")

ENTRY_POINT_GROUP = "corix.plugins"
HOME_DISTRIBUTION = "corix"

BUILTIN_PLUGINS = (
    "corix.apps.plugin",
    "corix.assessment.plugin",
    "corix.levels.plugin",
    "corix.measurement.plugin",
    "corix.scenarios.plugin",
)
"""The modules whose ``register`` adds corix's own components, each its package's. Named,
not imported, here: they sit in the layers above, which import this module."""


class Registry(Generic[T]):
    """A name → component mapping for one kind of component (adapters, summarizers…).

    ``builtins`` names the module of :data:`BUILTIN_PLUGINS` that registers corix's own
    components of this kind (none for a registry of a test's or a third party's)."""

    def __init__(self, kind: str, *, builtins: str | None = None) -> None:
        self.kind = kind
        self.builtins = builtins
        self._items: dict[str, T] = {}
        self._filled = False

    def add(self, name: str, item: T) -> None:
        """Register ``item`` under ``name`` as given; plugins use :meth:`Plugin.add`."""
        if name in self._items and self._items[name] is not item:
            raise ValueError(f"{self.kind} '{name}' is already registered")
        self._items[name] = item

    def get(self, name: str) -> T:
        self._fill()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.unknown_message(name)) from None

    def unknown_message(self, name: str) -> str:
        self._fill()
        return str(unknown_name(self.kind, name, self._items))

    def names(self) -> list[str]:
        self._fill()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        self._fill()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    @contextmanager
    def scope(self) -> Iterator[Registry[T]]:
        """Entries added inside the block are gone after it (tests register their own)."""
        self._fill()
        saved = dict(self._items)
        try:
            yield self
        finally:
            self._items = saved

    def _fill(self) -> None:
        """Register corix's own components of this kind, and every entry point's, once.

        Atomic across threads: other threads read the registry only once it is filled. A
        register function that reads it meanwhile sees what is registered so far."""
        if self._filled:
            return
        global _depth
        with _load_lock:
            if self._filled:
                return
            _depth += 1
            try:
                if self.builtins is not None:
                    _register_builtin(self.builtins)
                if not _scanned:
                    refresh_plugins(builtins=())
            finally:
                _depth -= 1
            # A read from inside a register function leaves it for the outermost to mark.
            self._filled = _depth == 0


class Plugin:
    """What a ``register`` function receives: it adds components under its distribution."""

    def __init__(self, distribution: str) -> None:
        self.distribution = distribution
        self.namespace = namespace_of(distribution)

    def qualified(self, name: str) -> str:
        return f"{self.namespace}.{name}" if self.namespace else name

    def add(self, registry: Registry[T], name: str, item: T) -> None:
        registry.add(self.qualified(name), item)


def namespace_of(distribution: str) -> str:
    """The prefix of a distribution's names: none for corix, else its normalized name."""
    normalized = re.sub(r"[-_.]+", "_", distribution).lower()
    return "" if normalized == HOME_DISTRIBUTION else normalized


RegisterFunction = Callable[[Plugin], None]

_loaded: set[tuple[str, str]] = set()
_scanned = False
_depth = 0
# Held while register functions run: another thread that reads a registry meanwhile waits
# for every registration instead of seeing a half-filled registry. Re-entrant, because a
# register function may itself read a registry (it then sees what is registered so far).
_load_lock = threading.RLock()


def load_plugins() -> None:
    """Register corix's own components of every kind, then every entry point's, once;
    later calls do nothing (a registry read fills only its own kind)."""
    with _load_lock:
        if not _scanned or any((HOME_DISTRIBUTION, m) not in _loaded for m in BUILTIN_PLUGINS):
            refresh_plugins()


def refresh_plugins(*, builtins: tuple[str, ...] = BUILTIN_PLUGINS) -> None:
    """Register the ``builtins`` modules' components not registered yet, then look for entry
    points again and call the ones not called yet (a newly installed distribution's), so a
    running process picks them up."""
    global _scanned
    with _load_lock:
        try:
            for module in builtins:
                _register_builtin(module)
            _register_entry_points()
        finally:
            _scanned = True


def _register_builtin(module: str) -> None:
    key = (HOME_DISTRIBUTION, module)
    if key in _loaded:
        return
    _loaded.add(key)
    register: RegisterFunction = importlib.import_module(module).register
    register(Plugin(HOME_DISTRIBUTION))


def _register_entry_points() -> None:
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        distribution = _distribution(entry)
        # corix's own are registered above; an older install's metadata may still name them.
        key = (distribution, entry.name)
        if distribution == HOME_DISTRIBUTION or key in _loaded:
            continue
        _loaded.add(key)
        _register(entry)


def _distribution(entry: EntryPoint) -> str:
    return entry.dist.name if entry.dist is not None else ""


def _register(entry: EntryPoint) -> None:
    distribution = _distribution(entry)
    try:
        register: RegisterFunction = entry.load()
        register(Plugin(distribution))
    except CorixError:
        raise
    except Exception as exc:
        raise CorixError(
            f"plugin '{entry.name}' of {distribution or 'an unknown distribution'} "
            f"({entry.value}) failed to register: {type(exc).__name__}: {exc}"
        ) from exc
