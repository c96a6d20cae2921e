"""corix's own summarizers (:data:`corix.registry.BUILTIN_PLUGINS`)."""

from __future__ import annotations

from corix.measurement.trees import BUILTIN_SUMMARIZERS, SUMMARIZERS
from corix.registry import Plugin


def register(plugin: Plugin) -> None:
    for name, summarizer in BUILTIN_SUMMARIZERS.items():
        plugin.add(SUMMARIZERS, name, summarizer)
